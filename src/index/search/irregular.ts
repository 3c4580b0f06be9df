/**
 * English irregular verbs. Porter stemming joins "cooked" to "cook" but not "bought" to "buy":
 * a question asks "what did Ann buy?" and the answer says "I bought…". Search adds the other
 * forms of such a verb to the words it looks for. A closed list of the language, not of a dataset.
 */

const TABLE = `arise arose arisen|awake awoke awoken|be was were been|bear bore borne|beat beat beaten|become became
begin began begun|bend bent|bet bet|bite bit bitten|bleed bled|blow blew blown|break broke broken|breed bred
bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung|come came|cost cost
creep crept|cut cut|deal dealt|dig dug|do did done|draw drew drawn|dream dreamt|drink drank drunk|drive drove driven
eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|find found|flee fled|fly flew flown|forbid forbade forbidden
forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone
grow grew grown|hang hung|have had|hear heard|hide hid hidden|hit hit|hold held|hurt hurt|keep kept
kneel knelt|know knew known|lay laid|lead led|lean leant|leap leapt|learn learnt|leave left|lend lent|let let|lie lay lain
light lit|lose lost|make made|mean meant|meet met|pay paid|put put|quit quit|read read|ride rode ridden|ring rang rung
rise rose risen|run ran|say said|see saw seen|seek sought|sell sold|send sent|set set|sew sewed sewn|shake shook shaken
shine shone|shoot shot|show showed shown|shrink shrank shrunk|shut shut|sing sang sung|sink sank sunk|sit sat|sleep slept
slide slid|speak spoke spoken|speed sped|spend spent|spill spilt|spin spun|spit spat|split split|spread spread
spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung|stink stank stunk|strike struck|string strung
strive strove striven|swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn
tell told|think thought|throw threw thrown|understand understood|wake woke woken|wear wore worn|weave wove woven
weep wept|win won|write wrote written`;

const FORMS = new Map<string, string[]>();
for (const entry of TABLE.split(/\|/)) {
  const forms = [...new Set(entry.trim().split(/\s+/))];
  for (const f of forms) FORMS.set(f, [...new Set([...(FORMS.get(f) ?? []), ...forms])]);
}

/** The other forms of the irregular verb this word is a form of ("buy" → ["bought"]), or none. */
export function otherForms(word: string): string[] {
  return (FORMS.get(word.toLowerCase()) ?? []).filter((f) => f !== word.toLowerCase());
}

/**
 * The words to search with their irregular verbs' other forms, when the question asks with
 * "did" (the answer tells it in the past). Only then: elsewhere "made", "got", "found" are
 * common words that match everything.
 */
export function withOtherForms(question: string, terms: string[]): string[] {
  return /\bdid(?:n['’]?t)?\b/i.test(question) ? [...new Set(terms.flatMap((t) => [t, ...otherForms(t)]))] : terms;
}
