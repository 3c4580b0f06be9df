// "name" questions: pets, family, colleagues, friends and places, each mentioned by name
// once in passing. Most can become entities with later follow-up mentions.

import type { Kind } from './types.js';
import { v } from './kit.js';
import { named, THING_EQ } from './named.js';
import { CAFES, COMPANIES, GYMS, PET_NAMES, PROJECTS, STREETS, SURNAMES, UK_TOWNS } from './personas.js';

export const NAME_KINDS: readonly Kind[] = [
  named({
    id: 'cat',
    group: 'cat',
    pool: PET_NAMES,
    intro: [
      "Our cat {N} has started sleeping on my laptop «every time I get up|whenever I'm on a call»",
      "Can't type properly, {N} (the cat) is lying across my arm",
      'Had to buy a new lamp because {N}, our cat, knocked the old one off the shelf «at 4am|during dinner»',
    ],
    bot: [
      'Ha, cats do love a warm keyboard. Maybe a heated pad next to your desk would lure her away?',
      "Classic cat behaviour. {N} clearly thinks she's in charge.",
      "Cats and shelves — a timeless feud. Hopefully she's unrepentant at least.",
    ],
    q: [(w) => `What is the name of ${w.poss} cat?`, (w) => `What's ${w.poss} cat called?`],
    about: (w) => `${w.poss} cat`,
    follow: [
      {
        text: 'Vet trip for {N} today, just her booster jabs — she was very brave',
        info: 'had her booster jabs at the vet',
        reply: 'Brave girl! Hopefully there was a treat afterwards.',
      },
      {
        text: '{N} caught a mouse last night and left it in my slipper. Lovely.',
        info: 'caught a mouse and left it in a slipper',
        reply: "Ha, a gift! She clearly thinks you can't hunt for yourself.",
      },
      {
        text: '{N} has decided the bath is her new favourite spot',
        info: 'likes sleeping in the bath',
        reply: 'Cats and baths — a strange love affair. Cool tiles, probably.',
      },
    ],
    distract: [
      ["My neighbour's cat {M} keeps sitting on our car bonnet", 'Ha, cars are just big warm cushions to cats.'],
      ['{F} sent me about forty photos of her cat {M} today', 'Sounds like a very well-documented cat!'],
    ],
  }),
  named({
    id: 'dog',
    group: 'dog',
    pool: PET_NAMES,
    intro: [
      "Took our dog {N} to the beach «this morning|at the weekend», he's «soaked|absolutely filthy» now",
      'Our dog {N} barked at the postman for ten solid minutes «today|this morning»',
      'Walking {N} in the rain again. Why did I get a dog that loves puddles',
    ],
    bot: [
      'Sounds like he had the best time! Towel by the door?',
      'The eternal dog-vs-postman rivalry. Good boy {N}, doing his job.',
      'Puddle dogs are the happiest dogs, to be fair. Stay dry!',
    ],
    q: [(w) => `What is the name of ${w.poss} dog?`, (w) => `What's ${w.poss} dog called?`],
    about: (w) => `${w.poss} dog`,
    follow: [
      {
        text: "{N} ate an entire sock, we're keeping a close eye on him",
        info: 'ate a sock',
        reply: 'Oh no! Keep an eye out and call the vet if he goes off his food.',
      },
      {
        text: 'Puppy class update: {N} can finally sit for more than one second',
        info: 'learned to sit at training class',
        reply: 'Progress! One whole second is a big deal.',
      },
      {
        text: 'Took {N} to the groomer, he looks like a completely different dog',
        info: 'went to the groomer',
        reply: 'Ha, the post-groom transformation is always dramatic.',
      },
    ],
    distract: [
      ["{F}'s dog {M} is the size of a small pony, I swear", 'Big dogs are the best — and the most expensive to feed!'],
      ['Met a dog called {M} at the park today, very fluffy', 'Fluffy park dogs are a highlight of any day.'],
    ],
  }),
  named({
    id: 'smallpet',
    group: 'smallpet',
    pool: PET_NAMES,
    xs: ['tortoise', 'rabbit', 'guinea pig', 'hamster'],
    intro: ["Cleaned out {N}'s hutch, my {X}, and now I smell of hay", 'My {X} {N} escaped «this morning|last night» and we found him behind the fridge'],
    bot: ['The glamorous side of pet ownership! He must be happy with a fresh home though.', "Oh no! Glad he turned up — they're escape artists."],
    q: [(w) => `What is ${w.poss} {X} called?`, (w) => `What's the name of ${w.poss} {X}?`],
    about: (w, x) => `${w.poss} ${x}`,
    follow: [
      {
        text: "{N} has discovered dandelions and won't eat anything else",
        info: 'loves dandelions',
        reply: 'Good taste — dandelions are a proper treat for them.',
      },
      {
        text: 'Vet says {N} is a bit overweight. Diet time for him',
        info: 'is on a diet after the vet said he was overweight',
        reply: "More veg, fewer treats — he'll be sulking, I bet.",
      },
    ],
  }),
  named({
    id: 'sister',
    group: 'sister',
    g: 'f',
    intro: [
      'My sister {N} is coming to stay «this weekend|for a few days», need to clear the spare room',
      "Long phone call with my sister {N} tonight, we hadn't talked properly in weeks",
    ],
    bot: ["Nice! Any plans while she's with you?", 'Those long catch-ups are the best. How is she doing?'],
    q: [(w) => `What is the name of ${w.poss} sister?`, (w) => `What's ${w.poss} sister called?`],
    about: (w) => `${w.poss} sister`,
    follow: [
      {
        text: '{N} just passed her driving test on the first try!',
        info: 'passed her driving test first time',
        reply: 'First time! Brilliant — she must be thrilled.',
      },
      {
        text: '{N} has started training as a paramedic',
        info: 'is training as a paramedic',
        reply: 'What a brilliant career choice. Tough, but so worthwhile.',
      },
      {
        text: "Helped {N} paint her new bedroom, I'm covered in sage green",
        info: 'painted her bedroom sage green',
        reply: 'Sage green is lovely — and very fashionable.',
      },
    ],
    distract: [["{C}'s sister is a vet, which is handy for pet questions", 'Very handy! Free advice is the best advice.']],
  }),
  named({
    id: 'brother',
    group: 'brother',
    g: 'm',
    intro: ["My brother {N} «borrowed|still has» my good drill and won't give it back", "My brother {N} called, he's thinking of quitting his job"],
    bot: ['Sibling borrowing is a one-way street, apparently.', 'Big decision! Does he have something else lined up?'],
    q: [(w) => `What's the name of ${w.poss} brother?`, (w) => `What is ${w.poss} brother called?`],
    about: (w) => `${w.poss} brother`,
    follow: [
      {
        text: '{N} is running a half marathon for charity, sponsored him £20',
        info: 'is running a charity half marathon',
        reply: "That's generous of you — good luck to him!",
      },
      { text: '{N} got engaged!! Found out on the family group chat', info: 'got engaged', reply: 'Oh how lovely! Congratulations to them.' },
    ],
    distract: [["{F}'s brother just moved to Canada", 'Big move! Hopefully they get to visit.']],
  }),
  named({
    id: 'partner',
    group: 'partner',
    g: 'any',
    intro: ['My partner {N} made the most amazing curry tonight', '{N} — my partner — booked us a surprise night away, no idea where yet'],
    bot: ['Lucky you! Did you get the recipe?', 'How exciting! A surprise trip is the best kind.'],
    q: [(w) => `What is the name of ${w.poss} partner?`, (w) => `Who is ${w.poss} partner?`],
    about: (w) => `${w.poss} partner`,
    follow: [
      {
        text: '{N} is away for work all week, the flat is very quiet',
        info: 'was away for work for a week',
        reply: 'Enjoy the remote control while it lasts!',
      },
      {
        text: '{N} started learning the guitar, send help',
        info: 'is learning the guitar',
        reply: "Ha, the early weeks are the hardest — on everyone's ears.",
      },
    ],
  }),
  named({
    id: 'mum',
    group: 'mum',
    g: 'f',
    intro: [
      "My mum, {N}, has just joined a choir and won't stop singing down the phone",
      "Mum (her name's {N}, everyone at church calls her Auntie {N}) sent me a parcel of homemade jam",
    ],
    bot: ["That's lovely — choirs are so good for people.", 'Homemade jam is a parcel of love. What flavour?'],
    q: [(w) => `What is the name of ${w.poss} mother?`, (w) => `What's ${w.poss} mum called?`],
    about: (w) => `${w.poss} mum`,
  }),
  named({
    id: 'manager',
    group: 'manager',
    g: 'any',
    intro: ['My manager {N} moved our one-to-one again, third time this month', 'Team lunch today, my manager {N} paid, which was nice'],
    bot: ["That's frustrating. Maybe suggest a fixed slot that's harder to move?", 'A manager who pays for lunch is a keeper!'],
    q: [(w) => `What is the name of ${w.poss} manager?`, (w) => `What's ${w.poss} line manager called?`],
    about: (w) => `${w.poss} manager`,
    follow: [
      { text: '{N} said I can lead the next client workshop', info: 'let the user lead the next client workshop', reply: "That's a great vote of confidence!" },
      {
        text: '{N} is off on parental leave from next week, so chaos',
        info: 'is going on parental leave',
        reply: "Exciting for them, chaotic for you! Who's covering?",
      },
    ],
    distract: [["{F}'s boss makes them clock in at 8 sharp, madness", 'That sounds exhausting.']],
  }),
  named({
    id: 'newcol',
    group: 'newcol',
    g: 'any',
    intro: ['Someone new joined our team today, {N}, seems really nice', "We have a new starter called {N}, I'm showing {him} the ropes this week"],
    bot: ['Always nice when a new person fits in quickly.', 'Good of you! First weeks are much easier with a friendly guide.'],
    q: [(w) => `What's the name of the new person on ${w.poss} team?`, (w) => `Who joined ${w.poss} team recently?`],
    about: (w) => `the new member of ${w.poss} team`,
    follow: [
      {
        text: "{N} brought in homemade baklava, {he}'s officially my favourite colleague",
        info: 'brought in homemade baklava',
        reply: 'Baklava is the fastest route to office popularity.',
      },
      {
        text: '{N} and I are pairing on the migration this week',
        info: 'is pairing with the user on the migration',
        reply: 'Pairing on a migration is a good way to share the pain.',
      },
    ],
  }),
  named({
    id: 'bestfriend',
    group: 'bestfriend',
    g: 'any',
    intro: ['My best friend {N} is «finally|officially» back from travelling!', 'Dinner with {N} tonight — best friend since we were eleven'],
    bot: ['Yay! You must have so much to catch up on.', "Friends since eleven — that's special. Have a lovely dinner!"],
    q: [(w) => `What is the name of ${w.poss} best friend?`, (w) => `Who is ${w.poss} best friend?`],
    about: (w) => `${w.poss} best friend`,
    follow: [
      {
        text: '{N} is getting married next summer and asked me to give a speech',
        info: 'is getting married next summer; the user is giving a speech',
        reply: 'What an honour! Plenty of time to draft something good.',
      },
      { text: '{N} just adopted a rescue greyhound', info: 'adopted a rescue greyhound', reply: 'Greyhounds make such gentle pets. Lovely news.' },
    ],
    distract: [["{C} says {his} best friend is a professional magician, no idea if that's true", "That's either a great story or a very committed bit."]],
  }),
  named({
    id: 'neighbour',
    group: 'neighbour',
    g: 'any',
    intro: ['Our neighbour {N} took in a parcel for me, must bake {him} something', 'Our next-door neighbour {N} lent us a ladder to clear the gutters'],
    bot: ['Good neighbours are gold. Biscuits are the universal thank-you.', 'Handy! Be careful up there.'],
    q: [(w) => `What is ${w.poss} neighbour called?`, (w) => `What's the name of ${w.poss} next-door neighbour?`],
    about: (w) => `${w.poss} neighbour`,
    follow: [
      {
        text: "{N} is having an extension built, so it's drilling from 8am",
        info: 'is having an extension built',
        reply: 'Ugh, 8am drilling is brutal. Earplugs?',
      },
    ],
  }),
  named({
    id: 'child',
    group: 'child',
    g: 'any',
    intro: [
      'My «kid|youngest|little one» {N} lost a tooth at school today, the tooth fairy is on a budget',
      'School play tonight, my kid {N} is a tree. Best tree, obviously',
    ],
    bot: ["Ha, tooth fairy inflation is real. What's the going rate?", 'The most important role! Trees hold the whole thing together.'],
    q: [(w) => `What is the name of ${w.poss} child?`, (w) => `What's ${w.poss} kid called?`],
    about: (w) => `${w.poss} child`,
    follow: [
      {
        text: '{N} wants to start football on Saturdays now',
        info: 'wants to play football on Saturdays',
        reply: 'Great — lots of clubs run Saturday sessions for kids.',
      },
      { text: '{N} got a gold star for {his} dinosaur project', info: 'got a gold star for a dinosaur project', reply: 'A gold star! Future palaeontologist.' },
    ],
  }),
  named({
    id: 'gym',
    group: 'gym',
    pool: GYMS,
    eq: THING_EQ,
    intro: ["I joined a climbing gym, {N}, it's ten minutes from the flat", 'Second session at {N} (the bouldering gym) and my forearms are dead'],
    bot: ['Climbing is such a good mix of fitness and puzzle-solving. Enjoy!', 'That forearm pump is a rite of passage. It gets better!'],
    q: [(w) => `What's the name of the climbing gym ${w.subj} ${v(w, 'goes', 'go')} to?`, (w) => `Which bouldering gym ${w.does} use?`],
    about: () => 'the climbing gym',
    follow: [
      { text: '{N} has reset all the routes, everything is hard again', info: 'reset its routes', reply: 'Fresh routes — a new set of puzzles to work out.' },
      { text: 'Did my first V3 at {N} tonight!!', info: 'where the user climbed a first V3', reply: "Your first V3! That's a real milestone." },
    ],
  }),
  named({
    id: 'cafe',
    group: 'cafe',
    pool: CAFES,
    eq: THING_EQ,
    intro: [
      'Working from {N} today, the café round the corner — they do amazing cinnamon buns',
      'The café I like, {N}, is closing for a month for a refit. Devastated',
    ],
    bot: ['Cinnamon buns and a change of scene — good combo.', 'Oh no! A month is a long time without your spot.'],
    q: [(w) => `What is the name of the café ${w.subj} ${v(w, 'likes', 'like')}?`, (w) => `Which café ${w.does} like to work from?`],
    about: () => 'the café',
    follow: [
      {
        text: '{N} has a new seasonal menu, the pumpkin loaf is unreal',
        info: 'has a new seasonal menu with pumpkin loaf',
        reply: 'Pumpkin loaf season is the best season.',
      },
    ],
  }),
  named({
    id: 'street',
    group: 'street',
    pool: STREETS,
    eq: THING_EQ,
    intro: ['The council is digging up {N} again, right outside our flat', 'Our flat on {N} has no hot water again. Third time this year'],
    bot: ["Roadworks outside the window, the dream. Hopefully it's quick.", 'Ugh, not again. Have you told the landlord?'],
    q: [(w) => `Which street ${w.does} live on?`, (w) => `What street is ${w.poss} flat on?`],
    about: () => "the user's street",
  }),
  named({
    id: 'hometown',
    group: 'hometown',
    pool: UK_TOWNS,
    eq: THING_EQ,
    intro: ['I grew up in {N}, tiny seaside place, nothing to do but the arcade', "Heading back to {N} for the weekend, where I grew up. Mum's making a roast"],
    bot: ['A seaside childhood sounds quite romantic from here!', 'Going home for a roast is the best. Enjoy!'],
    q: [(w) => `Where did ${w.subj} grow up?`, (w) => `What is ${w.poss} hometown?`],
    about: (w) => `${w.poss} hometown`,
    follow: [{ text: "They're finally opening a cinema in {N}, only took thirty years", info: 'is getting a cinema', reply: 'Ha, better late than never!' }],
  }),
  named({
    id: 'company',
    group: 'employer',
    pool: COMPANIES,
    eq: THING_EQ,
    intro: [
      "Big all-hands at {N} today, that's where I work, and they announced a four-day-week trial",
      'Five years at {N} this month. Where does the time go',
    ],
    bot: ["A four-day-week trial! That's exciting — fingers crossed it sticks.", "Congrats on five years! That's a real milestone."],
    q: [(w) => `Which company ${w.does} work for?`, (w) => `Where ${w.does} work?`],
    about: (w) => `${w.poss} employer`,
    follow: [
      {
        text: '{N} is moving offices in the spring, closer to the station',
        info: 'is moving offices closer to the station',
        reply: 'That should make the commute easier.',
      },
    ],
  }),
  named({
    id: 'project',
    group: 'project',
    pool: PROJECTS,
    eq: THING_EQ,
    intro: ["The new project at work is codenamed {N}. Very mysterious. It's a billing system", "Kick-off for project {N} today, I'm the tech lead"],
    bot: ['Ha, every billing system deserves a dramatic codename.', 'Tech lead — congrats! How did the kick-off go?'],
    q: [(w) => `What's the codename of ${w.poss} project at work?`, (w) => `What is the work project ${w.subj} ${v(w, 'is', 'am')} leading called?`],
    about: () => 'the work project',
    follow: [
      {
        text: "{N} slipped by two weeks, the vendor API isn't ready",
        info: 'slipped two weeks because of a vendor API',
        reply: "Classic vendor delay. At least it isn't on your side.",
      },
      {
        text: 'Demoed {N} to the directors today and they loved it',
        info: 'was demoed to the directors',
        reply: 'Brilliant — a good demo makes all the difference.',
      },
    ],
  }),
  named({
    id: 'plant',
    group: 'plant',
    g: 'any',
    xs: ['monstera', 'fiddle-leaf fig', 'cheese plant', 'bonsai'],
    intro: ["I've named my {X} {N}. {N} has a new leaf!", 'My {X} is called {N} and {N} is thriving, unlike everything else I own'],
    bot: ['A new leaf! Congratulations to {N}.', "Naming plants is proven to help, I'm sure of it."],
    q: [(w) => `What did ${w.subj} name ${w.prPoss} {X}?`, (w) => `What's ${w.poss} {X} called?`],
    about: (w, x) => `${w.poss} ${x}`,
  }),
  named({
    id: 'doctor',
    group: 'doctor',
    pool: SURNAMES,
    eq: THING_EQ,
    intro: ['Saw my GP, Dr {N}, about my knee. Physio referral, finally', 'Dr {N} at the surgery is lovely, actually listens'],
    bot: ["Good that you're getting it looked at!", 'A GP who listens is worth their weight in gold.'],
    q: [(w) => `What is the name of ${w.poss} GP?`, (w) => `Who is ${w.poss} doctor?`],
    about: (w) => `${w.poss} GP`,
  }),
];
