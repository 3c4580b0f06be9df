// Everyday small talk and tasks: the haystack the planted facts hide in.
// Each exchange is a list of message templates; roles alternate starting with the user
// unless a template starts with "U>" or "A>". «a|b» picks an alternative, {slot} draws
// from a pool (consistently within one exchange). Filler never states a lasting personal
// fact about the user (pets, family, preferences...), so it cannot contradict the answers.

export interface FillerExchange {
  topic: string;
  t: readonly string[];
}

export const FILLER_POOLS: Record<string, readonly string[]> = {
  veg: [
    'courgettes',
    'aubergine',
    'butternut squash',
    'sweet potatoes',
    'cauliflower',
    'leeks',
    'broccoli',
    'carrots',
    'parsnips',
    'red peppers',
    'mushrooms',
    'fennel',
    'beetroot',
    'brussels sprouts',
    'asparagus',
    'green beans',
    'cabbage',
  ],
  dish: [
    'a mushroom risotto',
    'a lentil dal',
    'a Thai green curry',
    'shakshuka',
    'a chickpea stew',
    'fajitas',
    'a vegetable lasagne',
    'a stir-fry',
    'a minestrone',
    'a bean chilli',
    'a tagine',
    'egg fried rice',
    'a Spanish omelette',
    'gnocchi with pesto',
    'a frittata',
    'a pearl barley soup',
  ],
  crumble: ['apples', 'pears', 'plums', 'rhubarb', 'blackberries'],
  spice: ['cumin', 'smoked paprika', 'turmeric', 'garam masala', 'sumac', "za'atar", 'chilli flakes', 'cardamom', 'cinnamon'],
  grain: ['basmati rice', 'quinoa', 'couscous', 'bulgur wheat', 'orzo', 'pearl barley', 'brown rice'],
  weekday: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'],
  film: [
    'The Grand Budapest Hotel',
    'Paddington 2',
    'Spirited Away',
    'Knives Out',
    'Hunt for the Wilderpeople',
    'Amélie',
    'Inside Out',
    'Up',
    'Coco',
    'The Princess Bride',
    'Chef',
    'Little Miss Sunshine',
    'School of Rock',
    'Mamma Mia!',
  ],
  show: [
    'Taskmaster',
    "Schitt's Creek",
    'Derry Girls',
    'Blue Planet II',
    'The Great British Bake Off',
    'Ghosts',
    'Brooklyn Nine-Nine',
    'Parks and Recreation',
    'Gavin & Stacey',
    'Bluey',
    'Mr Bean',
    'Would I Lie to You?',
  ],
  book: [
    'Project Hail Mary',
    'The Midnight Library',
    'Circe',
    'Klara and the Sun',
    'Piranesi',
    'The Thursday Murder Club',
    'A Gentleman in Moscow',
    'Normal People',
    'Educated',
    'Atomic Habits',
    'Station Eleven',
    'The Overstory',
    'Pachinko',
    'Lessons in Chemistry',
  ],
  podcast: [
    '99% Invisible',
    'The Rest Is History',
    'Radiolab',
    'No Such Thing as a Fish',
    'Freakonomics Radio',
    'Song Exploder',
    'In Our Time',
    'Desert Island Discs',
    'Hard Fork',
    'Off Menu',
  ],
  team: ['Arsenal', 'Liverpool', 'Celtic', 'Aston Villa', 'Newcastle', 'Brighton', 'Spurs', 'Brentford', 'Wolves'],
  sport: ['snooker', 'cricket', 'rugby', 'tennis', 'cycling', 'darts', 'F1'],
  lang: ['Python', 'TypeScript', 'JavaScript', 'Go', 'Rust', 'SQL', 'Bash'],
  shop: ['the chemist', 'the post office', 'the hardware shop', "the dry cleaner's", 'the bank', 'the library', 'the garden centre', "the key cutter's"],
  errand: [
    'return a parcel',
    'renew my library books',
    'pick up a prescription',
    'get a spare key cut',
    'drop off the dry cleaning',
    'post a birthday card',
    'buy stamps',
    'take the recycling to the tip',
  ],
  gift: ['notebook and a fancy pen', 'bag of good coffee beans', 'set of seeds and a trowel', 'cookbook', 'candle from a local maker', 'jigsaw'],
  ukcity: ['York', 'Edinburgh', 'Cardiff', 'Newcastle', 'Liverpool', 'Nottingham', 'Bath', 'Sheffield', 'Brighton', 'Oxford'],
  num: ['three', 'four', 'five', 'six'],
};

const x = (topic: string, ...t: string[]): FillerExchange => ({ topic, t });

export const FILLER: readonly FillerExchange[] = [
  // ---- cooking
  x(
    'cooking',
    '«Any idea|Quick question —|Remind me,» how long to roast {veg} «for|at 200C»?',
    "«Roughly|About» 25–35 minutes at 200°C, turning halfway. Cut the {veg} into even pieces so they cook at the same rate, and don't crowd the tray or they'll steam instead of browning.",
  ),
  x(
    'cooking',
    'What can I make with {veg}, {veg2} and a tin of chickpeas?',
    'A tray bake would work nicely: roast the {veg} and {veg2} with the chickpeas, olive oil and {spice}, then finish with lemon and a spoon of yoghurt or tahini. Or turn it all into a quick curry with a tin of tomatoes.',
    '«Ooh, tray bake it is.|Curry sounds good actually.»',
    '«Enjoy!|Perfect — let me know how it turns out.»',
  ),
  x(
    'cooking',
    'I «overdid|put way too much» {spice} in the soup. Can I save it?',
    'Usually, yes. Dilute it with more stock or a tin of tomatoes, add something starchy like potato or lentils, and a squeeze of lemon or a pinch of sugar can balance it out.',
    '«Ok|Right», lemon and more stock it is.',
    '«Good call.|Good luck — taste as you go.»',
  ),
  x(
    'cooking',
    'How do I stop rice going «mushy|gloopy»?',
    "Rinse it until the water runs clear, use about 1.5 parts water to 1 part rice for basmati, bring it to the boil, then lid on, lowest heat for 10 minutes and leave it to sit for 5 off the heat. Don't stir it while it cooks.",
  ),
  x(
    'cooking',
    'Thinking of making {dish} «tonight|for dinner». Too ambitious for a {weekday}?',
    'Not at all — {dish} is very doable midweek. Prep the veg while the pan heats and you could be eating in about 40 minutes.',
  ),
  x(
    'cooking',
    'Is it safe to freeze cooked {grain}?',
    'Yes, if you cool it quickly and freeze it within an hour or two. Cooked {grain} keeps for about a month; reheat until piping hot.',
  ),
  x(
    'cooking',
    "What's a good substitute for eggs in «pancakes|muffins|a cake»?",
    'A mashed banana or a "flax egg" (1 tbsp ground flaxseed plus 3 tbsp water, left for 5 minutes) per egg both work well. Apple sauce is fine too for sweeter bakes.',
  ),
  x(
    'cooking',
    'My bread came out «really dense|flat as a pancake» again',
    "That's usually under-proofing or tired yeast. Check the yeast is in date, let the dough rise somewhere warm until it's roughly doubled, and try the poke test: a dent that springs back slowly means it's ready.",
  ),
  x(
    'cooking',
    "How much fruit do I need for a crumble for six? I've got loads of {crumble}",
    "About 800g to 1kg of fruit is right for six. With {crumble}, add a little sugar and a squeeze of lemon, and don't pack the topping down.",
  ),
  x(
    'cooking',
    'Do you «have|know» a «quick|simple» marinade for tofu?',
    'Soy sauce, a little maple syrup, garlic, grated ginger and a splash of rice vinegar. Press the tofu first, marinate for at least 20 minutes, then bake or fry until crisp.',
  ),
  x(
    'cooking',
    "What's the actual difference between baking soda and baking powder?",
    'Baking soda is pure bicarbonate and needs an acid (buttermilk, yoghurt, lemon) to react; baking powder already contains the acid, so it works on its own. Powder is roughly a third as strong.',
  ),
  x(
    'cooking',
    'How long do «cooked leftovers|leftovers» last in the fridge?',
    'Generally 2–3 days for cooked food in a sealed container. Rice is best eaten within a day.',
  ),
  x(
    'cooking',
    'Made {dish} «last night|yesterday» and it was «a bit bland honestly|weirdly flat»',
    'More salt and an acid at the end — lemon juice or a splash of vinegar — usually wakes a dish like that up. A handful of fresh herbs helps too.',
  ),
  x(
    'cooking',
    'Can I use {spice} instead of {spice2}?',
    "They taste quite different, but in a stew or curry swapping {spice2} for {spice} won't ruin anything. Start with half the amount and taste.",
  ),
  x(
    'cooking',
    "What's a good lunch I can batch cook on Sunday?",
    "Grain bowls are great: a big tray of roasted {veg}, a pot of {grain}, and a jar of dressing. Mix and match through the week so it doesn't get boring.",
    "«Nice, that's basically zero effort|Love that, thanks»",
    "That's the idea! Five minutes of assembly each morning.",
  ),
  x(
    'cooking',
    'Is a cast-iron pan worth it?',
    "If you like searing and don't mind the weight, yes. It lasts forever; just dry it properly and wipe it with a little oil after washing.",
  ),
  x(
    'cooking',
    'How do I get crispy roast potatoes?',
    "Parboil them for 8–10 minutes, shake them in the colander to rough up the edges, then into properly hot oil at 220°C. Turn once, and don't skimp on the time.",
  ),
  x(
    'cooking',
    'Why do my onions always burn before they soften?',
    'The heat is probably too high. Cook them low and slow with a pinch of salt — salt draws out the water — and give them a good 10–15 minutes.',
  ),

  // ---- weather
  x(
    'weather',
    'Is it «supposed to|going to» rain in {city} «later|this afternoon»?',
    "I can't see a live forecast, but the Met Office app is worth a look before you head out — {city} weather can turn quickly. A light jacket is a safe bet.",
  ),
  x(
    'weather',
    "It's «absolutely|properly» freezing today",
    'Brr. Layers and a hot drink! Are you inside for most of the day at least?',
    '«Mostly|Yeah, mostly», just a quick walk at lunch.',
    "Then a good scarf and gloves and you'll survive it.",
  ),
  x(
    'weather',
    'Finally some sun in {city}!',
    'About time! Any plans to make the most of it?',
    'Might «eat lunch outside|go for a walk by the river|sit in the park for an hour».',
    'Sounds lovely — enjoy it while it lasts.',
  ),
  x(
    'weather',
    'The wind «last night|this morning» was wild, our bins ended up halfway down the street',
    "Ha, the classic bin chase. Hopefully nothing got damaged — a brick on the lid helps if it's blowing again tonight.",
  ),
  x(
    'weather',
    "What's the difference between fog and mist?",
    "It's about visibility: fog is when you can see less than 1 km, mist when you can see further than that.",
  ),
  x(
    'weather',
    'Should I bother «hanging the washing out|drying washing outside» today?',
    "If it's dry with a breeze, even a cool day dries washing well. If showers are forecast, hedge your bets and keep it near the back door.",
  ),
  x(
    'weather',
    'How hot is too hot for a run?',
    "Above about 25°C it's worth slowing down, going early or late, and taking water. Dizziness or chills mean stop.",
  ),
  x(
    'weather',
    'Grey again. «This weather is|These grey days are» «getting to me|draining»',
    "It really can drag you down. A walk in daylight, even cloudy daylight, helps more than you'd think — and maybe plan something to look forward to this week.",
  ),
  x(
    'weather',
    'Got absolutely soaked on the way «in|home»',
    'Oh no! Get dry and get a hot drink in you. Stuffing newspaper in wet shoes helps them dry overnight.',
  ),
  x(
    'weather',
    'Is it going to snow this winter, do you reckon?',
    "Hard to say this far out! Long-range forecasts are mostly guesswork. It's worth keeping an ice scraper in the car just in case.",
  ),

  // ---- work
  x(
    'work',
    'Standup ran «40 minutes|way over» again «today|this morning»',
    'Oof. Maybe suggest parking longer discussions until after standup so only the people involved stay?',
    "«Yeah, I might bring that up in the retro|Good shout, I'll suggest it»",
    'Good plan. Framing it as saving everyone time usually lands well.',
  ),
  x(
    'work',
    'Can you help me word an email asking for a deadline extension?',
    'Sure: "Hi [name], I wanted to flag early that the [task] will need a little more time to do properly. Would [new date] work? Happy to share a draft of what\'s done so far." Short, early, and with a concrete new date is the key.',
  ),
  x(
    'work',
    '{coworker} «keeps|has started» booking meetings over my lunch',
    "That's annoying. Blocking the time as busy in your calendar usually fixes it — most people just look for a free slot.",
  ),
  x(
    'work',
    "I have to present to the whole department «on {weekday}|tomorrow» and I'm «nervous|dreading it»",
    'Totally normal. Rehearse out loud twice, know your first two sentences by heart, and have one clear takeaway. The nerves usually fade after the first minute.',
  ),
  x(
    'work',
    'How do I say no to extra work without sounding lazy?',
    'Tie it to priorities: "I can take that on, but it would push back X — which should come first?" It shows you\'re willing while making the trade-off visible.',
  ),
  x(
    'work',
    'Spent «the whole day|all afternoon» in spreadsheets, my eyes hurt',
    'Screen fatigue is real. Try the 20-20-20 rule: every 20 minutes, look at something 20 feet away for 20 seconds.',
  ),
  x(
    'work',
    "What's a polite way to chase someone who hasn't replied in a week?",
    '"Just bumping this up in case it got buried — could you let me know by Thursday?" A specific date helps.',
  ),
  x(
    'work',
    "Our team offsite is «next month|in a few weeks» and I've been asked to suggest an activity",
    "A cooking class, an escape room, or a guided walk with a good lunch are all low-pressure options that don't rely on anyone being sporty.",
  ),
  x(
    'work',
    'The office printer has jammed «for the third time this week|again». I hate that thing',
    "Printers are the one piece of office tech that never improves. Report it so there's a paper trail, and use the one on the other floor in the meantime.",
  ),
  x(
    'work',
    'How do I write a good one-line summary for my weekly update?',
    'Lead with the outcome, not the activity: "Shipped X, which cuts Y by Z" beats "worked on X". If nothing shipped, say what\'s unblocked next.',
  ),
  x(
    'work',
    '{coworker} and I disagree on how to lay out the «new dashboard|quarterly report»',
    'Could you each sketch your version and test it against one real question it needs to answer? Disagreements like that often settle fast with a concrete example.',
  ),
  x(
    'work',
    'I have «four|five» deadlines «on Friday|this week». Where do I even start?',
    "List them, estimate each in hours, and do the one that unblocks other people first. Then the smallest one for momentum. Flag any that won't fit now rather than on Thursday night.",
  ),
  x(
    'work',
    'Is it weird to eat lunch at my desk every day?',
    'Lots of people do, but a proper break — even 15 minutes away from the screen — usually makes the afternoon more productive.',
  ),
  x(
    'work',
    'Had a surprisingly good one-to-one with {coworker} today',
    'Nice! What made it good?',
    'We actually «talked through the roadmap|sorted out who owns what» instead of just doing status updates.',
    "That's the best kind — worth keeping that format.",
  ),
  x(
    'work',
    'How long should a cover letter be?',
    'Under a page: three or four short paragraphs — why this role, two concrete examples that match what they ask for, and a brief close.',
  ),
  x(
    'work',
    'The office is «freezing|boiling» and nobody can agree on the thermostat',
    'The eternal office war. A desk fan or a cardigan on the back of the chair is the only real peace treaty.',
  ),
  x(
    'work',
    'Got «a load of|so many» Slack notifications while I was in a workshop, how do people cope',
    "Batch them: check at set times, mute busy channels, and set your status so people know when you'll reply.",
  ),
  x(
    'work',
    'Can you summarise what OKRs are in one line?',
    'Objectives are what you want to achieve; key results are the measurable signs you got there — usually three to five per objective, reviewed quarterly.',
  ),
  x('work', "{coworker} «brought in|made» cake for the team and I've had three slices", 'Ha — team cake is the best kind of cake. No regrets allowed.'),

  // ---- errands
  x(
    'errands',
    "Need to {errand} after work, «that's the whole plan|don't let me forget»",
    "Set a phone alarm for the moment you leave work — that's the most reliable trick. Anything else on the list?",
    "«Nope, just that.|That's it for today.»",
    'Nice and manageable then!',
  ),
  x(
    'errands',
    'What time does {shop} usually close on a Saturday?',
    'It varies, but many close around 5 or 5:30 on Saturdays. Worth checking the opening hours online before you go.',
  ),
  x('errands', 'Post office queue was «out the door|ridiculous»', 'Classic. Lunchtime is always the worst — mid-morning on a weekday tends to be quietest.'),
  x(
    'errands',
    'How do I get «a red wine stain|a coffee stain» out of a «white shirt|rug»?',
    "Blot (don't rub), rinse with cold water from the back, then a bit of washing-up liquid or stain remover. Avoid hot water until it's gone — heat sets stains.",
  ),
  x(
    'errands',
    'Spent «an hour|ages» on hold with the «energy company|bank|broadband provider» today',
    "That's so draining. Did you get it sorted in the end?",
    '«Kind of. They\'re "escalating" it.|Yes, finally — refund on the way.»',
    'Fingers crossed. Note the reference number and the date just in case.',
  ),
  x(
    'errands',
    'What basics should I always have in the cupboard?',
    'Onions, garlic, tinned tomatoes, pasta, rice, stock cubes, eggs, frozen peas, lemons and a couple of spices. With those you can make most weeknight meals.',
  ),
  x(
    'errands',
    'Is it better to take an old mattress to the tip or book a council collection?',
    'If you have a car it fits in, the tip is free. Otherwise the council collection is usually cheap and saves a lot of hassle.',
  ),
  x(
    'errands',
    'Bike has a puncture «again|and I need it tomorrow»',
    "Annoying! Check the inside of the tyre for the thorn or glass first, or it'll go again straight away. Patch kit, tyre levers, 15 minutes.",
  ),
  x(
    'errands',
    'Should I renew my railcard now or wait till it runs out?',
    'Renewing a little early is usually fine — on most apps the new one starts when the old one ends. Look for a discount code first.',
  ),
  x(
    'errands',
    'Supermarket was out of {veg} AND {veg2}. What is happening',
    'Supply hiccups, probably — it usually sorts itself out within a few days. The frozen aisle is a good backup for a lot of veg.',
  ),
  x(
    'errands',
    'Need to send a parcel to {ukcity}, cheapest way?',
    'For a small parcel, a drop-off shop service is usually cheapest — compare a couple of couriers online first. Get proof of postage either way.',
  ),

  // ---- recommendations
  x(
    'recs',
    'Can you recommend a film for tonight? Something «light|funny|not too heavy»',
    "How about {film}? It's warm, well made, and easy to watch after a long day.",
    "«Ooh, haven't seen that in years|Never seen it actually!»",
    'Perfect — enjoy!',
  ),
  x('recs', 'Any podcast recommendations for a long «drive|walk»?', '{podcast} is a good one — episodes stand alone, so you can dip in anywhere.'),
  x('recs', 'We just finished {show}, what should we watch next?', 'If you liked {show}, {show2} has a similar feel and the episodes are nice and short.'),
  x(
    'recs',
    'Need a gift idea for {friend}, they love «hiking|cooking|gardening|coffee»',
    "What's your budget roughly?",
    'Around «£25|£30|£40»',
    'Then a nice {gift} would be perfect — thoughtful without being over the top.',
  ),
  x(
    'recs',
    'Any tips for a weekend in {ukcity}?',
    "Walk the centre early before it gets busy, find a good independent café for breakfast, and check if there's a market on. Book dinner ahead on Saturday night.",
  ),
  x('recs', 'Is {book} worth reading?', "Lots of people love it — it's very readable. Give it the first 50 pages and you'll know if it's for you."),
  x(
    'recs',
    'I want to get into classical music. Where do I start?',
    "Try a few crowd-pleasers: Debussy's Clair de Lune, Vivaldi's Four Seasons, Dvořák's New World Symphony. A radio station is an easy way to discover more.",
  ),
  x(
    'recs',
    "What's a houseplant that's hard to kill?",
    'Snake plants, pothos and ZZ plants are almost indestructible — they cope with low light and forgetful watering.',
  ),
  x(
    'recs',
    "Any good walks near {city} that aren't too muddy?",
    'Riverside and canal towpaths are usually the least muddy after rain. Local walking groups around {city} often list well-surfaced loops.',
  ),
  x(
    'recs',
    'Recommend me a documentary?',
    "If you haven't seen it, My Octopus Teacher is gentle and gorgeous. For something punchier, Free Solo is nerve-racking in the best way.",
  ),
  x(
    'recs',
    "What's a good app for learning to cook?",
    'Honestly, a couple of good YouTube channels beat most apps — you can see the technique. Pick simple recipes and cook each one twice.',
  ),
  x(
    'recs',
    'Can you suggest a nice day trip from {city}?',
    'A historic town or a coastal spot within an hour by train is usually ideal — somewhere walkable with a good lunch option. Want me to help plan timings?',
    'Maybe next week, thanks',
    'Sure, just ask!',
  ),

  // ---- coding
  x('coding', 'How do I reverse a list in Python?', 'Either `my_list.reverse()` to do it in place, or `my_list[::-1]` to get a reversed copy.'),
  x(
    'coding',
    "What's the difference between `let` and `const` in JavaScript?",
    "Both are block-scoped. A `const` can't be reassigned (though the object it points to can still be mutated); a `let` can. Default to `const` and use `let` only when you need to reassign.",
  ),
  x(
    'coding',
    'My {lang} script is «super slow|taking forever» on a big CSV',
    "First check where the time goes — often it's growing a list in a loop or searching it repeatedly. Can you share the loop?",
    'It basically appends to a list and then checks if each new item is already in it',
    "That's the culprit: checking membership in a list scans it every time. Use a set or a dict for lookups and it'll drop to roughly linear time.",
  ),
  x('coding', 'How do I undo my last git commit but keep the changes?', '`git reset --soft HEAD~1` — the commit goes away but your changes stay staged.'),
  x(
    'coding',
    'What does "cannot read properties of undefined" mean?',
    "You're reading a property of something that is `undefined` — e.g. `user.name` before `user` has loaded. Check where that variable is set, or use optional chaining: `user?.name`.",
  ),
  x(
    'coding',
    'SQL question: how do I get the latest row per customer?',
    'Use a window function: `ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created_at DESC)` in a subquery, then keep the rows where it equals 1.',
  ),
  x(
    'coding',
    'Rough regex for a UK postcode?',
    "A reasonable approximation (case-insensitive): `^[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}$`. It won't catch every edge case, but it's fine for form validation.",
  ),
  x(
    'coding',
    'How do I centre a div, for the hundredth time',
    'On the parent: `display: flex; justify-content: center; align-items: center;`. Or with grid: `display: grid; place-items: center;`.',
  ),
  x(
    'coding',
    "What's a good way to actually learn {lang} properly?",
    "Build something small you want to exist — a script that tidies your downloads folder, a tiny web app — and read other people's code. Tutorials only get you so far.",
  ),
  x(
    'coding',
    'My tests pass locally but fail in CI',
    "Common causes: timezone or locale differences, tests depending on each other's order, missing env vars, or different dependency versions. Does CI install from the lockfile?",
    "It does, I think. They're date tests",
    'Then timezone is the prime suspect — pin TZ=UTC in CI and in the test setup, and the dates should line up.',
  ),
  x(
    'coding',
    'How do I see which process is using port 3000?',
    'On macOS or Linux: `lsof -i :3000`. On Windows: `netstat -ano | findstr :3000`, then look up the PID.',
  ),
  x(
    'coding',
    'Is it bad to use `any` in TypeScript?',
    'Not always, but it switches off type checking for that value. `unknown` is the safer choice — it forces you to narrow the type before using it.',
  ),
  x(
    'coding',
    'How do I merge two dictionaries in Python?',
    'In Python 3.9+: `merged = a | b`. Otherwise `merged = {**a, **b}`. Values from the right-hand one win on duplicate keys.',
  ),
  x(
    'coding',
    'What does a 502 error mean?',
    'Bad Gateway: something in the middle, like a proxy or load balancer, got an invalid response from the server behind it. Usually the backend is down or timing out.',
  ),
  x(
    'coding',
    "Explain closures to me like I'm tired",
    'A closure is a function that remembers the variables from where it was created, even after that outer function has finished. Like a backpack of variables it carries around.',
  ),
  x(
    'coding',
    'Excel: how do I look up a value from another sheet?',
    'XLOOKUP: `=XLOOKUP(A2, Sheet2!A:A, Sheet2!B:B)`. On older versions, VLOOKUP with FALSE as the last argument does the same job.',
  ),
  x(
    'coding',
    'Why is my CSS not applying?',
    "Usually specificity or load order — another rule wins. Inspect the element in dev tools; overridden rules show as crossed out, which tells you what's beating yours.",
  ),
  x(
    'coding',
    "What's the difference between == and === in JS?",
    '`===` compares without type conversion; `==` converts types first, so `0 == ""` is true. Stick to `===`.',
  ),
  x(
    'coding',
    'How do I write a for loop over a dictionary in Python with both keys and values?',
    '`for key, value in my_dict.items():` — that gives you both at once.',
  ),
  x(
    'coding',
    'git says "detached HEAD", am I in trouble?',
    "Not at all — you've checked out a commit rather than a branch. If you want to keep work from here, run `git switch -c new-branch-name`.",
  ),
  x(
    'coding',
    'Should I learn {lang} or {lang2} first?',
    'Either is fine — pick the one closest to what you want to build. The second language is always much easier than the first.',
  ),

  // ---- books & reading (general, never "I'm reading X")
  x(
    'books',
    'Do audiobooks count as reading?',
    "I'd say yes — you're still following the story and the ideas. Some people remember more from listening, some less.",
  ),
  x(
    'books',
    'How do people read fifty books a year?',
    "Mostly by reading in small gaps — commutes, before bed — and by abandoning books they're not enjoying. Audiobooks help a lot too.",
  ),
  x(
    'books',
    'Is it worth joining a book club?',
    "If you like talking about what you read, definitely. It also nudges you towards books you'd never pick yourself.",
  ),
  x(
    'books',
    "What's a good first classic for someone who says they hate classics?",
    'Something short and lively: Animal Farm, The Great Gatsby or Of Mice and Men. All under 200 pages.',
  ),
  x(
    'books',
    'E-reader or paper books?',
    'E-readers win for travel and reading in bed; paper wins for the feel and for lending. Plenty of people happily use both.',
  ),
  x('books', 'Is {book} a good book club pick?', "It tends to spark a good discussion — lots of people have opinions on it, and it's not too long."),

  // ---- sport
  x(
    'sport',
    'Did you see the {team} game «last night|at the weekend»?',
    "I don't watch live, but I heard it was a tense one! How did you feel about the result?",
    'Gutted, we threw it away in the last ten minutes',
    "Ouch. There's always next week.",
  ),
  x('sport', "{team} actually won at the weekend, I'm in a great mood", 'Love that! Enjoy the bragging rights while they last.'),
  x(
    'sport',
    'How do I get better at running uphill?',
    'Short hill repeats once a week — 6 to 8 efforts of 30–60 seconds, walking back down — and keep your steps short and your posture tall.',
  ),
  x(
    'sport',
    'Is it ok to exercise every day?',
    "Easy movement every day is fine, but mix in rest or very light days so your body can recover — that's when you actually get fitter.",
  ),
  x(
    'sport',
    'Watching the {sport} on telly with a cup of tea, perfect {weekday} evening',
    'Sounds ideal. Anyone exciting playing?',
    "«Not really, it's just nice background noise|Yeah, it's a close one»",
    'The best kind of evening.',
  ),
  x(
    'sport',
    "What's a good stretch for tight hamstrings?",
    'A gentle standing forward fold, or lying on your back with a strap round your foot. Hold for 30 seconds and breathe — no bouncing.',
  ),
  x(
    'sport',
    'How many steps a day is actually healthy?',
    'The 10,000 figure came from a marketing campaign. Research suggests the benefits level off around 7,000–9,000 for most adults — but any increase helps.',
  ),
  x(
    'sport',
    'Thinking of trying «yoga|pilates». Any tips for a complete beginner?',
    "Start with a beginners' class rather than an app so someone can check your form, and don't compare yourself to the regulars. Go easy.",
  ),
  x(
    'sport',
    '{coworker} is trying to get a work «cricket|rounders|netball» team going',
    'Fun! Are you going to join?',
    "«Maybe, if I'm not terrible|Probably just as moral support»",
    'Ha — moral support is a vital role.',
  ),
  x('sport', 'Who has won the most Wimbledon singles titles?', "Roger Federer has eight men's titles; Martina Navratilova holds the women's record with nine."),
  x(
    'sport',
    'Do I really need to warm up before a run?',
    'A few minutes of easy jogging or brisk walking and some leg swings is plenty — it makes the first kilometre feel a lot better.',
  ),
  x(
    'sport',
    'What are the rules of snooker in one sentence?',
    'Pot a red, then a colour, repeat until the reds are gone, then pot the colours in order — highest score wins.',
  ),

  // ---- health
  x(
    'health',
    "I've had a headache «all day|since this morning»",
    "Sorry to hear that. Water, something to eat and a break from screens often help. If it's unusual for you or really bad, check in with a pharmacist or GP.",
  ),
  x(
    'health',
    'How much water should I actually drink?',
    "Roughly 6–8 glasses a day for most people, more if it's hot or you're active. Pale yellow is a decent guide.",
  ),
  x(
    'health',
    'Is it normal to feel this tired in the afternoon?',
    'Very common — the post-lunch dip is real. A short walk outside and a lighter lunch can help.',
  ),
  x(
    'health',
    'Any tips for a «stiff neck|sore back» from sitting all day?',
    'Raise the screen to eye level, keep your feet flat, and stand up every 30–45 minutes. Gentle neck rolls and shoulder shrugs help too.',
  ),
  x('health', 'Should I get the flu jab this year?', "If you're eligible or it's offered through work, it's generally a good idea. Pharmacies do it quickly."),
  x('health', 'I keep forgetting to take my vitamins', 'Tie it to something you already do daily — keep them next to the kettle or your toothbrush.'),
  x('health', 'Is dark chocolate actually good for you?', "In moderation it has some benefits, but they're small. It's more a nice treat than a health food."),
  x(
    'health',
    "Think I'm coming down with a cold",
    'Ugh. Rest, fluids and something warm. If you can work from home tomorrow, your colleagues will thank you.',
    "«Yeah, I'll see how I feel|Already on the honey and lemon»",
    'Feel better soon!',
  ),

  // ---- travel logistics (generic)
  x(
    'travel',
    'How early should I get to the airport for a short-haul flight?',
    'Two hours is the standard advice, a bit more in summer. With only hand luggage and online check-in, 90 minutes is often fine.',
  ),
  x(
    'travel',
    "What's the liquids rule for hand luggage again?",
    "At most UK airports it's still containers of 100ml max in one clear resealable bag — some airports with new scanners have relaxed it, so check your departure airport.",
  ),
  x(
    'travel',
    'Best way to beat jet lag?',
    'Shift your sleep an hour a day before you go, get morning daylight at your destination, and stay up until a normal bedtime when you arrive.',
  ),
  x(
    'travel',
    'Train or coach to {ukcity}?',
    'The train is quicker and comfier; the coach is often half the price. Book the train early with a railcard and the gap shrinks.',
  ),
  x(
    'travel',
    'What should I pack for a long weekend away?',
    'Layers, a waterproof, comfy shoes, chargers, any meds and one nice outfit. Rolling clothes saves space.',
  ),
  x(
    'travel',
    'Is travel insurance worth it for a short trip?',
    "Usually yes — it's cheap, and one cancelled flight or lost bag covers years of premiums. An annual policy is good value if you travel a few times a year.",
  ),

  // ---- tech support
  x(
    'tech',
    'My phone battery «dies by lunchtime|drains so fast» lately',
    'Check battery usage in settings — one app is often the culprit. Lowering brightness and turning off background refresh helps too.',
  ),
  x(
    'tech',
    'How do I make a strong password I can actually remember?',
    'Three or four random words joined together — like "kettle-violet-harbour-jump" — and a password manager for everything else.',
  ),
  x(
    'tech',
    'Wifi keeps dropping «in the evenings|upstairs»',
    'Move the router off the floor and away from the microwave, and restart it. If upstairs is the weak spot, a mesh system or powerline adapter helps.',
  ),
  x(
    'tech',
    'Is it worth paying for more cloud storage?',
    'If your phone is the only place your photos live, yes. A couple of pounds a month is cheap insurance.',
  ),
  x('tech', 'How do I take a screenshot on a Mac?', 'Cmd+Shift+4 to select an area, Cmd+Shift+3 for the whole screen, Cmd+Shift+5 for more options.'),
  x(
    'tech',
    'My laptop fan is «really loud|going like a jet engine»',
    "See what's using CPU in Activity Monitor or Task Manager. If nothing stands out, the vents may need a clean — compressed air does wonders.",
  ),
  x(
    'tech',
    'Should I turn my computer off every night?',
    'Not necessary for most modern machines, but a restart every few days helps install updates and clears out memory leaks.',
  ),
  x(
    'tech',
    'How do I stop getting so many marketing emails?',
    'Hit unsubscribe on each one (most are legitimate), and use a separate address for shopping sign-ups in future.',
  ),
  x(
    'tech',
    'Got a text saying my parcel is held and I need to pay £1.99. Scam?',
    "Almost certainly. Couriers don't usually ask for small fees by text with a link. Don't click — check the courier's official site if you're expecting something.",
  ),
  x(
    'tech',
    "My printer at home says it's offline but it's right there",
    "Turn the printer and router off and on, then remove and re-add the printer on your computer. It's almost always the Wi-Fi connection being forgotten.",
  ),

  // ---- home & DIY
  x(
    'home',
    'How do I bleed a radiator?',
    'Heating off, cloth under the valve at the top corner, then turn the key anticlockwise until it hisses. When water appears, close it. Check the boiler pressure afterwards.',
  ),
  x(
    'home',
    "There's mould on the bathroom ceiling again",
    'Wipe it with a mould spray, then tackle the cause: run the extractor fan during and after showers and open a window when you can.',
  ),
  x(
    'home',
    "What's the easiest way to descale a kettle?",
    'Half fill it with equal parts water and white vinegar (or a few spoons of citric acid), boil, leave for an hour, then rinse and boil fresh water once.',
  ),
  x(
    'home',
    'Any low-effort way to clean the oven?',
    'A paste of bicarbonate of soda and water inside, left overnight, then a spray of vinegar and a wipe. Far less scrubbing.',
  ),
  x(
    'home',
    'How do I put up a shelf on a plasterboard wall?',
    'Use proper cavity fixings (spring toggles or metal anchors), or better, find the studs with a detector and screw into those.',
  ),
  x(
    'home',
    "The kitchen tap won't stop dripping",
    'Usually a worn washer or cartridge. Turn the water off under the sink, take the tap head off, and bring the old part to a hardware shop to match it.',
  ),
  x(
    'home',
    'Is it cheaper to leave the heating on low all day?',
    'Generally no — heating only when you need it, with a thermostat, is cheaper for most homes.',
  ),
  x(
    'home',
    'The smoke alarm keeps chirping «at 3am, naturally|every few minutes»',
    'That chirp is almost always the low-battery warning. Swap the battery and press the test button.',
  ),
  x(
    'home',
    'What colour should I paint a small dark hallway?',
    'Warm off-whites or a soft mid-tone make it feel bigger; a deep colour can feel cosy with good lighting. Test patches at different times of day.',
  ),
  x('home', 'How often should I actually wash my bedding?', 'Once a week is the usual advice, every two at a push. Pillows themselves every few months.'),

  // ---- trivia & language
  x(
    'trivia',
    'Why is the sky blue, again?',
    'Sunlight scatters off air molecules, and blue wavelengths scatter much more than red — so blue light reaches you from every direction.',
  ),
  x('trivia', 'How many languages are spoken in the world?', 'Around 7,000, though many are endangered and spoken by small communities.'),
  x('trivia', 'When do the clocks go forward?', 'In the UK, on the last Sunday in March at 1am. They go back on the last Sunday in October.'),
  x('trivia', 'Is a tomato a fruit or a vegetable?', "Botanically a fruit, since it holds the seeds; in the kitchen it's treated as a vegetable."),
  x('trivia', "What's the plural of octopus?", '"Octopuses" is the standard English plural. "Octopi" is common but based on a mistaken Latin ending.'),
  x('trivia', 'How far away is the moon?', 'About 384,000 km on average — roughly 30 Earths lined up.'),
  x('trivia', 'Affect or effect: "the rain ___ the match"?', '"Affected" — affect is usually the verb, effect the noun.'),
  x('trivia', 'How do you say "where is the station" in French?', '"Où est la gare ?"'),
  x('trivia', 'How many teaspoons in a tablespoon?', 'Three.'),
  x(
    'trivia',
    'Why do we have leap years?',
    'A year is about 365.24 days, so an extra day every four years keeps the calendar in line with the seasons (with a few century exceptions).',
  ),
  x('trivia', "What's the longest river in the UK?", 'The Severn, at about 354 km.'),
  x('trivia', 'Who painted the Girl with a Pearl Earring?', 'Johannes Vermeer, around 1665.'),

  // ---- money
  x(
    'money',
    'Is it worth switching energy supplier at the moment?',
    'Compare your tariff with fixed deals on a comparison site — if the saving beats any exit fee, yes.',
  ),
  x(
    'money',
    'How do people actually stick to a budget?',
    "Automate savings on payday so the money's gone before you see it, and track just three or four categories instead of everything.",
  ),
  x(
    'money',
    'Should I pay off my credit card or put money in savings?',
    'Pay off the card first — card interest is almost always higher than anything savings earn. Keep a small emergency buffer though.',
  ),
  x('money', "What's a reasonable emergency fund?", 'Three to six months of essential spending is the usual target. Even one month is a big step.'),

  // ---- small talk
  x(
    'chat',
    "I'm so tired today",
    'Rough night? Maybe an early one tonight.',
    '«Yeah, next door had a party|Just one of those days»',
    "Ugh. Hopefully tonight's quieter.",
  ),
  x(
    'chat',
    'Guess who just spilled coffee on their keyboard',
    'Oh no! Unplug it, turn it upside down and let it dry completely before trying it again. Fingers crossed.',
  ),
  x('chat', 'Do you ever get bored?', "Not really — every conversation is a bit different. You're today's highlight so far, obviously."),
  x(
    'chat',
    "What should I do this weekend? I've got nothing planned",
    'One small plan — a walk somewhere new, a market, a film — and the rest lazy. What are you in the mood for?',
    'Something low-key',
    'Then a long walk and a proper brunch sounds about right.',
  ),
  x(
    'chat',
    'Tell me a fun fact',
    '«Octopuses have three hearts, and two of them stop beating when they swim.|Honey never really goes off — edible honey has been found in ancient Egyptian tombs.|A group of flamingos is called a flamboyance.»',
  ),
  x(
    'chat',
    'Just saw the «biggest|fattest» pigeon «at the bus stop|outside my window»',
    'Ha — city pigeons are living their best lives. Did it look pleased with itself?',
    'Extremely',
    'Good for him.',
  ),
  x('chat', 'Finally finished a «massive|huge» tidy of my desk', 'Very satisfying! Clear desk, clear mind, supposedly.'),
  x(
    'chat',
    'Help me name a pub quiz team?',
    '"Quizteama Aguilera", "Les Quizerables" or "The Universally Challenged"?',
    'Les Quizerables, obviously',
    'Excellent choice. Good luck!',
  ),
  x(
    'chat',
    "It's been one of those «Mondays|weeks»",
    'Sorry to hear it. Anything in particular, or everything at once?',
    'Everything at once',
    'Then the bar for tonight is low: food, something easy to watch, bed.',
  ),
  x('chat', "The neighbours' car alarm went off at 6am", "That's brutal. Earplugs might be worth it if it becomes a habit."),
  x('chat', 'Thanks for the help earlier by the way', 'Any time! How did it go?', 'Fine in the end', 'Glad to hear it.'),
  x('chat', 'Write me a haiku about «Mondays|the rain|my commute»', 'Grey light on the glass / the kettle sighs into steam / the day asks for more'),
  x('chat', 'Is it too early for mince pies?', 'Depends who you ask! Some start in November, some hold out until December. I say enjoy them when you like.'),
  x('chat', "I've been procrastinating all afternoon", 'Happens to everyone. Pick one tiny task — five minutes — and just start. Momentum tends to follow.'),
  x('chat', 'Hang on, someone at the door', 'U>Ok back. It was a parcel for next door, obviously.', 'Ha, the unofficial neighbourhood post office.'),
  x('chat', 'brb, kettle', 'U>Right, tea acquired', 'The important things first.'),
  x('chat', 'Do you know any good jokes?', "Why don't scientists trust atoms? Because they make up everything.", 'Groan', "I'll take that as a success."),
  x(
    'chat',
    "Wish me luck, I'm attempting to assemble flat-pack furniture",
    "Good luck! Lay out all the parts first and count the screws — and don't fully tighten anything until the end.",
    'U>Update: one screw left over',
    "Classic. As long as it doesn't wobble, it was a spare.",
  ),
  x(
    'chat',
    "What's a nice thing I can do for myself this evening?",
    'A proper dinner, a bath or shower with good music, phone in another room for an hour. Small but it adds up.',
  ),

  // ---- planning & writing
  x(
    'planning',
    'How do I stop checking my phone so much?',
    'Put it in another room while you work, turn off non-essential notifications, and move social apps off your home screen.',
  ),
  x(
    'planning',
    'Any tips for planning my week?',
    'Keep it small: three priorities for the week, one main thing per day, and a 10-minute review on Friday to see what slipped.',
  ),
  x(
    'planning',
    'Help me plan a «birthday|leaving» dinner for «eight|ten» people?',
    'Book somewhere with a set menu or a private table, collect deposits early, and send one message with date, time, place and cost. Want help with the message?',
    'Yes please',
    '"Hi all! Dinner on [date] at [time], [place]. It\'s a set menu at around £35 — can you let me know by Friday if you\'re in?"',
  ),
  x(
    'planning',
    'How do I politely decline a wedding invitation?',
    "Keep it warm and short: \"We're so happy for you both and really sorry we can't make it — we'll be raising a glass from afar.\" A card or gift is a nice touch.",
  ),
  x(
    'planning',
    "What's the Pomodoro technique?",
    "Work 25 minutes, break 5, repeat; after four rounds take a longer break. Great for starting things you're avoiding.",
  ),
  x(
    'writing',
    'Make this sound less rude: "As I already said, the file is on the drive."',
    '"Just in case it got lost in the thread — the file\'s on the shared drive here."',
  ),
  x('writing', 'Is it "fewer" or "less" people?', '"Fewer people" — fewer for things you can count, less for amounts (less time, less water).'),
  x('writing', 'Another word for "excited" for a cover letter?', '"Enthusiastic" or "keen" — or show it instead: "I\'d relish the chance to..."'),
  x(
    'writing',
    'Help me write a leaving card message for {coworker}',
    '"It\'s been brilliant working with you — thanks for all the help, the laughs and the biscuits. Good luck with everything next!"',
  ),
  x(
    'writing',
    "How do I start an email to someone I've never met?",
    '"Hi [name], I\'m [you] from [team] — [one line on why you\'re writing]." Get to the point in the first two lines.',
  ),

  // ---- music & garden
  x('music', 'What\'s that song that goes "is this the real life"?', "That's Bohemian Rhapsody by Queen."),
  x(
    'music',
    'Any tips for making a playlist for a «dinner party|road trip»?',
    'Start mellow, build energy in the middle, and mix familiar songs with a few new ones. Around three hours so nothing repeats.',
  ),
  x('garden', 'When should I plant daffodil bulbs?', 'September to October is ideal, about three times as deep as the bulb is tall, pointy end up.'),
  x('garden', "Something's eating my lettuce leaves at night", 'Slugs or snails, most likely. Beer traps, copper tape or a torch patrol after dark all work.'),
  x(
    'garden',
    'How often should I water houseplants?',
    'When the top couple of centimetres of soil is dry. Most houseplants die from overwatering, not underwatering.',
  ),
  x('garden', 'Can I compost teabags?', 'Plastic-free ones, yes. Plenty of teabags contain a little plastic, so check the brand — loose leaf is always fine.'),
];

export const OPENERS = {
  morning: ['Morning!', 'Morning 👋', 'Hey, morning', 'Good morning!', 'Hi — early one today'],
  day: ['Hey', 'Hi again', 'Afternoon!', 'Hello hello', 'Ok quick one', 'Hiya', 'You around?'],
  evening: ['Evening!', 'Hey, you there?', 'Hi — long day', 'Evening 👋', 'Back again 😅'],
} as const;
export const OPENER_REPLIES = [
  "Hi {name}! What's on your mind?",
  "Hey! How's your day going?",
  'Hello! Always here.',
  'Hi {name} — what can I do for you?',
  'Hey {name}, good to hear from you.',
  "Hi! What's up?",
] as const;
export const CLOSERS = [
  ["Right, I'm off. Thanks!", 'Any time — have a good one!'],
  ["Ok that's all for now", 'Talk soon!'],
  ['Gotta run, talk later', 'Later!'],
  ['Thanks, night!', 'Night! Sleep well.'],
  ['Cheers 👍', 'Anytime!'],
  ['Ok, back to it', 'Good luck with the rest of the day!'],
] as const;
