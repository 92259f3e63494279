// The demo course catalogue for local development, and the course builder the tests use for fixtures.
// Deterministic: a seeded PRNG (mulberry32) and fixed timestamps, so every run produces the same SQL.
// Idempotent: fixed ids and `INSERT ... ON CONFLICT DO NOTHING`, so loading it twice changes nothing.
// No Node imports: the Workers-runtime tests import buildCourse() from here too.

/** A small, fast, seedable PRNG (public domain); returns floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const CATALOG_SEED = 20260420;
export const CEFR_LEVELS = ["A1", "A2", "B1", "B2", "C1", "C2"];
export const ITEM_TYPES = [
  "vocabulary",
  "grammar",
  "listening",
  "reading",
  "speaking",
  "writing",
  "multiple_choice",
  "translation",
  "matching",
];
export const SKILLS = ["reading", "listening", "writing", "speaking", "vocabulary", "grammar"];
const BLOCK_KINDS = {
  3: ["warm_up", "practice", "review"],
  4: ["warm_up", "presentation", "practice", "review"],
  5: ["warm_up", "presentation", "practice", "review", "challenge"],
};
const BLOCK_TITLES = {
  warm_up: "Warm-up",
  presentation: "New language",
  practice: "Practice",
  review: "Review",
  challenge: "Challenge",
};

/** Typical time on task and base XP per item type. */
const ITEM_COST = {
  vocabulary: { seconds: 20, xp: 5 },
  matching: { seconds: 45, xp: 8 },
  multiple_choice: { seconds: 25, xp: 6 },
  grammar: { seconds: 35, xp: 8 },
  listening: { seconds: 40, xp: 10 },
  reading: { seconds: 90, xp: 11 },
  translation: { seconds: 45, xp: 12 },
  speaking: { seconds: 40, xp: 14 },
  writing: { seconds: 150, xp: 16 },
};

// ---------------------------------------------------------------------------------------------
// What lessons are about: can-do statements per CEFR level, in the language of instruction (English).

const TOPICS = {
  A1: [
    ["Greetings and introductions", "greet people and introduce yourself", "greetings"],
    ["Numbers and age", "count to 100 and say how old you are", "numbers"],
    ["My family", "talk about your family members", "the family"],
    ["Days, months and dates", "say the date and make simple appointments", "the calendar"],
    ["Food and drink", "say what you like to eat and drink", "food and drink"],
    ["At the café", "order something to eat and drink in a café", "the café"],
    ["My home", "describe your flat or house", "the home"],
    ["Telling the time", "ask for and tell the time", "time"],
    ["Daily routine", "describe a normal day", "daily routines"],
    ["Around town", "name places in town and say where they are", "the town"],
    ["Shopping for basics", "buy everyday things and ask for prices", "shopping"],
    ["Hobbies and free time", "say what you do in your free time", "hobbies"],
  ],
  A2: [
    ["Last weekend", "tell a friend what you did last weekend", "weekend activities"],
    ["Travel plans", "plan a short trip and buy tickets", "travel"],
    ["At the hotel", "book a room and solve simple problems at reception", "hotels"],
    ["At the restaurant", "reserve a table, order a meal and pay", "restaurants"],
    ["Health and the body", "describe symptoms at the doctor's", "health"],
    ["Describing people", "describe someone's appearance and character", "people"],
    ["Jobs and workplaces", "talk about your job and where you work", "work"],
    ["Public transport", "ask for and follow directions on public transport", "transport"],
    ["Celebrations", "talk about festivals and family celebrations", "celebrations"],
    ["Making plans", "invite friends, accept and decline", "social plans"],
    ["Childhood memories", "describe what life was like when you were a child", "childhood"],
    ["Phone calls", "leave a message and arrange things on the phone", "the phone"],
  ],
  B1: [
    ["Work and careers", "talk about your career and ambitions", "careers"],
    ["Education", "compare school systems and your own studies", "education"],
    ["The environment", "discuss everyday environmental choices", "the environment"],
    ["Technology in daily life", "explain how you use technology", "technology"],
    ["Films and books", "summarise a story and give your opinion", "films and books"],
    ["Travel stories", "tell a travel story with background and events", "travel experiences"],
    ["Giving advice", "give and ask for advice on personal problems", "advice"],
    ["Complaints", "make a complaint and negotiate a solution", "complaints"],
    ["City and countryside", "compare life in the city and in the country", "places to live"],
    ["Traditions", "explain a tradition from your country", "traditions"],
    ["Job interviews", "answer typical job interview questions", "interviews"],
    ["Future plans", "talk about plans, hopes and predictions", "the future"],
  ],
  B2: [
    ["Debating current issues", "argue for and against a position", "current issues"],
    ["Science and discovery", "explain a scientific idea in plain words", "science"],
    ["The economy", "discuss prices, jobs and the economy", "the economy"],
    ["Art and culture", "review an exhibition, concert or play", "the arts"],
    ["Social media", "weigh the benefits and risks of social media", "social media"],
    ["Work–life balance", "discuss working hours and well-being", "work–life balance"],
    ["Consumer rights", "write a formal complaint and cite your rights", "consumer rights"],
    ["Urban life", "propose improvements to a city", "cities"],
    ["History", "narrate historical events and their consequences", "history"],
    ["Innovation", "present a new product or idea", "innovation"],
    ["Tourism", "discuss the impact of tourism", "tourism"],
    ["Relationships", "talk about friendship and relationships with nuance", "relationships"],
  ],
  C1: [
    ["Persuasion and rhetoric", "build a persuasive argument for an audience", "rhetoric"],
    ["Academic writing", "structure an essay with clear argumentation", "academic texts"],
    ["Idioms and fixed expressions", "use idiomatic language naturally", "idioms"],
    ["Literature", "analyse an extract from a novel", "literature"],
    ["Law and society", "discuss legal and ethical questions", "the law"],
    ["Media literacy", "evaluate sources and bias in the news", "the media"],
    ["Negotiation", "negotiate terms in a professional setting", "negotiation"],
    ["Regional varieties", "recognise regional accents and vocabulary", "language varieties"],
    ["Philosophy", "discuss abstract ideas precisely", "philosophy"],
    ["Public speaking", "give a structured talk and handle questions", "presentations"],
  ],
  C2: [
    ["Nuance and register", "shift register precisely for any audience", "register"],
    ["Humour and irony", "understand and use humour and irony", "humour"],
    ["Poetry", "discuss the form and meaning of a poem", "poetry"],
    ["Specialist texts", "summarise a specialist text for non-specialists", "specialist writing"],
    ["Mediation", "mediate between speakers with different views", "mediation"],
    ["Style", "edit a text for style and concision", "style"],
  ],
};

const GENERIC_GRAMMAR = {
  A1: ["the present tense", "questions and negation", "articles and gender", "possessives"],
  A2: ["the past tense", "comparatives", "object pronouns", "the near future"],
  B1: ["past tenses in narratives", "the conditional", "relative clauses", "reported speech"],
  B2: ["the passive voice", "hypothetical sentences", "connectors of contrast", "nominalisation"],
  C1: ["advanced subordination", "inversion and emphasis", "formal register", "cohesion devices"],
  C2: ["stylistic variation", "idiomatic grammar", "ellipsis", "rhetorical structures"],
};

// ---------------------------------------------------------------------------------------------
// Language banks: words, sentences, gap-fills and short texts that the items are made of.

const LANGUAGE_BANKS = {
  es: {
    name: "Spanish",
    grammar: {
      A1: ["ser and estar", "regular -ar, -er and -ir verbs", "gustar", "hay and está"],
      A2: ["the preterite", "the imperfect", "direct object pronouns", "ir a + infinitive"],
      B1: ["preterite or imperfect", "the present subjunctive", "the conditional", "relative pronouns"],
      B2: ["the imperfect subjunctive", "si-clauses", "the passive with se", "reported speech"],
      C1: ["subjunctive in concessive clauses", "discourse markers", "periphrastic verbs", "formal register"],
    },
    words: [
      ["la manzana", "the apple"],
      ["el pan", "the bread"],
      ["el queso", "the cheese"],
      ["la casa", "the house"],
      ["el libro", "the book"],
      ["la calle", "the street"],
      ["el tren", "the train"],
      ["la playa", "the beach"],
      ["el trabajo", "the job"],
      ["la ciudad", "the city"],
      ["el médico", "the doctor"],
      ["la semana", "the week"],
      ["el desayuno", "breakfast"],
      ["la cuenta", "the bill"],
      ["el billete", "the ticket"],
      ["la habitación", "the room"],
      ["barato", "cheap"],
      ["cansado", "tired"],
      ["mañana", "tomorrow"],
      ["siempre", "always"],
    ],
    sentences: [
      ["Me llamo Ana y soy de Sevilla.", "My name is Ana and I am from Seville."],
      ["¿Cuánto cuesta el billete?", "How much is the ticket?"],
      ["Quisiera un café con leche, por favor.", "I would like a white coffee, please."],
      ["Vivo en un piso cerca del centro.", "I live in a flat near the centre."],
      ["El fin de semana pasado fui a la playa.", "Last weekend I went to the beach."],
      ["¿A qué hora sale el tren?", "What time does the train leave?"],
      ["Mi hermana trabaja en un hospital.", "My sister works in a hospital."],
      ["Hace mucho calor hoy.", "It is very hot today."],
      [
        "Si tuviera más tiempo, aprendería a tocar la guitarra.",
        "If I had more time, I would learn to play the guitar.",
      ],
      ["Es importante que lleguemos a tiempo.", "It is important that we arrive on time."],
    ],
    gaps: [
      ["Yo ___ estudiante.", "soy", ["estoy", "es"], "Use ser for identity and profession."],
      ["Nosotros ___ en Madrid.", "vivimos", ["vivís", "viven"], "The nosotros form of vivir ends in -imos."],
      ["¿Dónde ___ la estación?", "está", ["es", "hay"], "Use estar for location."],
      [
        "Ayer ___ al cine con mis amigos.",
        "fui",
        ["voy", "iba"],
        "A completed action in the past takes the preterite.",
      ],
      [
        "Me ___ mucho los libros de historia.",
        "gustan",
        ["gusta", "gusto"],
        "Gustar agrees with the thing liked: los libros → gustan.",
      ],
      [
        "Espero que ___ buen tiempo mañana.",
        "haga",
        ["hace", "hará"],
        "Esperar que is followed by the subjunctive.",
      ],
    ],
    texts: [
      [
        "Lucía vive en Valencia. Cada mañana toma el autobús a las ocho y llega a la oficina a las ocho y media. Por la tarde, le gusta pasear por la playa con su perro.",
        "How does Lucía get to work?",
        "By bus",
        ["On foot", "By train", "By car"],
      ],
      [
        "El mercado central abre de lunes a sábado. Los domingos está cerrado, pero hay un mercadillo de antigüedades en la plaza.",
        "What happens on Sundays?",
        "There is an antiques market in the square",
        ["The central market opens late", "The central market is open all day", "There is no market at all"],
      ],
    ],
  },
  fr: {
    name: "French",
    grammar: {
      A1: ["être and avoir", "regular -er verbs", "articles and gender", "questions with est-ce que"],
      A2: ["the passé composé", "the imparfait", "the near future", "object pronouns"],
      B1: [
        "passé composé or imparfait",
        "the subjunctive after il faut que",
        "the conditional",
        "relative pronouns qui, que, dont",
      ],
      B2: [
        "the plus-que-parfait",
        "hypothetical si-clauses",
        "the passive voice",
        "connectors of concession",
      ],
    },
    words: [
      ["la pomme", "the apple"],
      ["le pain", "the bread"],
      ["le fromage", "the cheese"],
      ["la maison", "the house"],
      ["le livre", "the book"],
      ["la rue", "the street"],
      ["le train", "the train"],
      ["la plage", "the beach"],
      ["le travail", "work"],
      ["la ville", "the town"],
      ["le médecin", "the doctor"],
      ["la semaine", "the week"],
      ["le petit-déjeuner", "breakfast"],
      ["l'addition", "the bill"],
      ["le billet", "the ticket"],
      ["la chambre", "the bedroom"],
      ["pas cher", "cheap"],
      ["fatigué", "tired"],
      ["demain", "tomorrow"],
      ["toujours", "always"],
    ],
    sentences: [
      ["Je m'appelle Claire et j'habite à Lyon.", "My name is Claire and I live in Lyon."],
      ["Combien coûte le billet ?", "How much is the ticket?"],
      ["Je voudrais un café crème, s'il vous plaît.", "I would like a white coffee, please."],
      ["Mon appartement est près de la gare.", "My flat is near the station."],
      ["Le week-end dernier, je suis allé à la mer.", "Last weekend I went to the seaside."],
      ["À quelle heure part le train ?", "What time does the train leave?"],
      ["Ma sœur travaille dans une banque.", "My sister works in a bank."],
      ["Il fait beau aujourd'hui.", "The weather is nice today."],
      ["Si j'avais le temps, j'apprendrais la guitare.", "If I had the time, I would learn the guitar."],
      ["Il faut que nous partions tôt.", "We have to leave early."],
    ],
    gaps: [
      ["Je ___ étudiant.", "suis", ["ai", "est"], "Use être for identity and profession."],
      ["Nous ___ à Paris.", "habitons", ["habitez", "habitent"], "The nous form of -er verbs ends in -ons."],
      ["Hier, elle ___ allée au cinéma.", "est", ["a", "était"], "Aller forms the passé composé with être."],
      [
        "Il faut que tu ___ tes devoirs.",
        "fasses",
        ["fais", "feras"],
        "Il faut que is followed by the subjunctive.",
      ],
      ["C'est le livre ___ je t'ai parlé.", "dont", ["que", "qui"], "Parler de → dont."],
      [
        "Quand j'étais petit, je ___ au foot.",
        "jouais",
        ["ai joué", "jouerai"],
        "Habits in the past take the imparfait.",
      ],
    ],
    texts: [
      [
        "Paul habite à Nantes. Le matin, il prend le tram pour aller au bureau. Le soir, il fait souvent du vélo le long de la Loire.",
        "How does Paul get to the office?",
        "By tram",
        ["By bike", "On foot", "By car"],
      ],
      [
        "La bibliothèque municipale est ouverte du mardi au samedi. Le lundi, elle est fermée, mais on peut rendre les livres dans la boîte à l'entrée.",
        "What can you do on Mondays?",
        "Return books in the box at the entrance",
        ["Borrow books", "Use the reading room", "Nothing at all"],
      ],
    ],
  },
  de: {
    name: "German",
    grammar: {
      A1: ["sein and haben", "verb position in main clauses", "the accusative", "modal verbs"],
      A2: ["the Perfekt", "dative prepositions", "separable verbs", "weil and dass clauses"],
      B1: ["the Präteritum", "relative clauses", "Konjunktiv II", "the passive voice"],
      B2: ["the Plusquamperfekt", "extended participles", "nominal style", "two-part connectors"],
    },
    words: [
      ["der Apfel", "the apple"],
      ["das Brot", "the bread"],
      ["der Käse", "the cheese"],
      ["das Haus", "the house"],
      ["das Buch", "the book"],
      ["die Straße", "the street"],
      ["der Zug", "the train"],
      ["der Strand", "the beach"],
      ["die Arbeit", "work"],
      ["die Stadt", "the city"],
      ["der Arzt", "the doctor"],
      ["die Woche", "the week"],
      ["das Frühstück", "breakfast"],
      ["die Rechnung", "the bill"],
      ["die Fahrkarte", "the ticket"],
      ["das Zimmer", "the room"],
      ["billig", "cheap"],
      ["müde", "tired"],
      ["morgen", "tomorrow"],
      ["immer", "always"],
    ],
    sentences: [
      ["Ich heiße Jonas und komme aus Hamburg.", "My name is Jonas and I come from Hamburg."],
      ["Was kostet die Fahrkarte?", "How much is the ticket?"],
      ["Ich hätte gern einen Kaffee mit Milch.", "I would like a coffee with milk."],
      ["Meine Wohnung liegt in der Nähe vom Bahnhof.", "My flat is near the station."],
      ["Letztes Wochenende bin ich an die Ostsee gefahren.", "Last weekend I went to the Baltic Sea."],
      ["Wann fährt der Zug ab?", "When does the train leave?"],
      ["Meine Schwester arbeitet in einem Krankenhaus.", "My sister works in a hospital."],
      ["Heute ist es sehr warm.", "It is very warm today."],
      [
        "Wenn ich mehr Zeit hätte, würde ich Gitarre lernen.",
        "If I had more time, I would learn the guitar.",
      ],
      ["Das Projekt wurde letzte Woche abgeschlossen.", "The project was completed last week."],
    ],
    gaps: [
      ["Ich ___ Student.", "bin", ["habe", "ist"], "Use sein for identity and profession."],
      ["Wir ___ in Berlin.", "wohnen", ["wohnt", "wohnst"], "The wir form ends in -en."],
      [
        "Gestern ___ ich ins Kino gegangen.",
        "bin",
        ["habe", "war"],
        "Verbs of movement form the Perfekt with sein.",
      ],
      ["Ich fahre mit ___ Bus.", "dem", ["den", "der"], "Mit takes the dative: der Bus → dem Bus."],
      [
        "Ich lerne Deutsch, weil ich in Wien ___.",
        "arbeite",
        ["arbeiten", "arbeitet"],
        "In a weil-clause the verb goes to the end; ich → arbeite.",
      ],
      [
        "Wenn ich reich ___, würde ich reisen.",
        "wäre",
        ["bin", "war"],
        "Unreal conditions take Konjunktiv II.",
      ],
    ],
    texts: [
      [
        "Anna wohnt in München. Jeden Morgen fährt sie mit dem Fahrrad zur Arbeit. Am Wochenende wandert sie gern in den Bergen.",
        "How does Anna get to work?",
        "By bike",
        ["By underground", "By car", "On foot"],
      ],
      [
        "Das Schwimmbad ist von Montag bis Freitag geöffnet. Am Samstag gibt es einen Schwimmkurs für Kinder, am Sonntag bleibt es geschlossen.",
        "What happens on Saturdays?",
        "There is a swimming course for children",
        ["The pool is closed", "The pool is open to everybody", "There is a competition"],
      ],
    ],
  },
  it: {
    name: "Italian",
    grammar: {
      A1: ["essere and avere", "regular -are verbs", "articles and gender", "c'è and ci sono"],
      A2: ["the passato prossimo", "reflexive verbs", "direct object pronouns", "the future tense"],
    },
    words: [
      ["la mela", "the apple"],
      ["il pane", "the bread"],
      ["il formaggio", "the cheese"],
      ["la casa", "the house"],
      ["il libro", "the book"],
      ["la strada", "the street"],
      ["il treno", "the train"],
      ["la spiaggia", "the beach"],
      ["il lavoro", "work"],
      ["la città", "the city"],
      ["il medico", "the doctor"],
      ["la settimana", "the week"],
      ["la colazione", "breakfast"],
      ["il conto", "the bill"],
      ["il biglietto", "the ticket"],
      ["la camera", "the room"],
      ["economico", "cheap"],
      ["stanco", "tired"],
      ["domani", "tomorrow"],
      ["sempre", "always"],
    ],
    sentences: [
      ["Mi chiamo Marco e sono di Bologna.", "My name is Marco and I am from Bologna."],
      ["Quanto costa il biglietto?", "How much is the ticket?"],
      ["Vorrei un cappuccino, per favore.", "I would like a cappuccino, please."],
      ["Abito vicino alla stazione.", "I live near the station."],
      ["Il fine settimana scorso sono andato al mare.", "Last weekend I went to the seaside."],
      ["A che ora parte il treno?", "What time does the train leave?"],
      ["Mia sorella lavora in un ospedale.", "My sister works in a hospital."],
      ["Oggi fa molto caldo.", "It is very hot today."],
      ["Domani visiteremo il Colosseo.", "Tomorrow we will visit the Colosseum."],
      ["Il conto, per favore.", "The bill, please."],
    ],
    gaps: [
      ["Io ___ studente.", "sono", ["ho", "è"], "Use essere for identity and profession."],
      ["Noi ___ a Roma.", "abitiamo", ["abitate", "abitano"], "The noi form ends in -iamo."],
      ["Ieri ___ andata al cinema.", "sono", ["ho", "ero"], "Andare forms the passato prossimo with essere."],
      ["Nel frigo ___ due bottiglie d'acqua.", "ci sono", ["c'è", "è"], "Plural things: ci sono."],
      [
        "Domani ___ presto.",
        "partiremo",
        ["partiamo", "siamo partiti"],
        "Future plans can take the future tense.",
      ],
      ["Mi ___ alle sette.", "sveglio", ["svegli", "sveglia"], "Reflexive verb, io form: mi sveglio."],
    ],
    texts: [
      [
        "Giulia vive a Firenze. Ogni mattina va al lavoro a piedi e si ferma al bar per un caffè. La sera le piace cucinare per gli amici.",
        "How does Giulia get to work?",
        "On foot",
        ["By bus", "By bike", "By car"],
      ],
      [
        "Il museo è aperto tutti i giorni tranne il lunedì. La prima domenica del mese l'ingresso è gratuito.",
        "When is entry free?",
        "On the first Sunday of the month",
        ["Every Monday", "Every day", "Never"],
      ],
    ],
  },
  ja: {
    name: "Japanese",
    grammar: {
      A1: [
        "です and じゃないです",
        "the particles は and が",
        "the particle を with ます verbs",
        "adjectives ending in い and な",
      ],
    },
    words: [
      ["りんご (ringo)", "apple"],
      ["パン (pan)", "bread"],
      ["みず (mizu)", "water"],
      ["いえ (ie)", "house"],
      ["ほん (hon)", "book"],
      ["えき (eki)", "station"],
      ["でんしゃ (densha)", "train"],
      ["うみ (umi)", "the sea"],
      ["しごと (shigoto)", "work"],
      ["まち (machi)", "town"],
      ["せんせい (sensei)", "teacher"],
      ["あした (ashita)", "tomorrow"],
      ["あさごはん (asagohan)", "breakfast"],
      ["おかいけい (okaikei)", "the bill"],
      ["きっぷ (kippu)", "ticket"],
      ["へや (heya)", "room"],
      ["やすい (yasui)", "cheap"],
      ["たかい (takai)", "expensive"],
      ["きょう (kyō)", "today"],
      ["いつも (itsumo)", "always"],
    ],
    sentences: [
      ["はじめまして、たなかです。", "Nice to meet you, I am Tanaka."],
      ["この きっぷは いくらですか。", "How much is this ticket?"],
      ["コーヒーを ください。", "A coffee, please."],
      ["えきは どこですか。", "Where is the station?"],
      ["まいあさ しちじに おきます。", "I get up at seven every morning."],
      ["でんしゃは なんじに でますか。", "What time does the train leave?"],
      ["あねは びょういんで はたらいています。", "My older sister works at a hospital."],
      ["きょうは あついですね。", "It is hot today, isn't it?"],
      ["わたしは がくせいです。", "I am a student."],
      ["にほんごは おもしろいです。", "Japanese is interesting."],
    ],
    gaps: [
      ["わたし ___ がくせいです。", "は", ["を", "に"], "は marks the topic of the sentence."],
      ["コーヒー ___ のみます。", "を", ["は", "で"], "を marks the direct object."],
      ["がっこう ___ いきます。", "に", ["を", "が"], "に marks the destination."],
      ["これは わたしの ほん ___。", "です", ["ます", "でした"], "Nouns end polite sentences with です."],
      ["としょかん ___ べんきょうします。", "で", ["に", "を"], "で marks where an action happens."],
      ["この へやは ___ です。", "しずか", ["しずかな", "しずかに"], "な-adjectives drop な before です."],
    ],
    texts: [
      [
        "やまださんは とうきょうに すんでいます。まいあさ でんしゃで かいしゃに いきます。しゅうまつは こうえんで さんぽします。",
        "How does Yamada-san get to the office?",
        "By train",
        ["By bus", "On foot", "By bike"],
      ],
      [
        "この レストランは じゅういちじから よるの くじまでです。げつようびは やすみです。",
        "When is the restaurant closed?",
        "On Mondays",
        ["On Sundays", "In the evening", "Never"],
      ],
    ],
  },
};

function bankFor(language) {
  return (
    LANGUAGE_BANKS[language] ??
    LANGUAGE_BANKS[language.split("-")[0].toLowerCase()] ?? { ...LANGUAGE_BANKS.es, name: language }
  );
}

// ---------------------------------------------------------------------------------------------
// The builder

const pad = (n, width = 2) => String(n).padStart(width, "0");
const pick = (rng, list) => list[Math.floor(rng() * list.length)];
const between = (rng, range) =>
  Array.isArray(range) ? range[0] + Math.floor(rng() * (range[1] - range[0] + 1)) : range;

function shuffle(rng, list) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** `count` distinct elements of `list`, none equal to `except`. */
function distinct(rng, list, count, except) {
  return shuffle(
    rng,
    list.filter((x) => x !== except),
  ).slice(0, count);
}

function skillFor(rng, type) {
  switch (type) {
    case "multiple_choice":
      return pick(rng, ["reading", "grammar", "vocabulary"]);
    case "translation":
      return "writing";
    case "matching":
      return "vocabulary";
    default:
      return type;
  }
}

function audioUrl(language, text) {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.codePointAt(0), 16777619) >>> 0;
  return `https://cdn.lingua.example/audio/${language}/${h.toString(16).padStart(8, "0")}.mp3`;
}

function itemContent(rng, type, bank, language, topic) {
  const word = pick(rng, bank.words);
  const sentence = pick(rng, bank.sentences);
  switch (type) {
    case "vocabulary":
      return {
        prompt: `What does «${word[0]}» mean?`,
        word: word[0],
        audio_url: audioUrl(language, word[0]),
        options: shuffle(rng, [word[1], ...distinct(rng, bank.words, 3, word).map((w) => w[1])]),
        answer: word[1],
      };
    case "grammar": {
      const [text, answer, wrong, explanation] = pick(rng, bank.gaps);
      return {
        prompt: "Choose the word that completes the sentence.",
        sentence: text,
        options: shuffle(rng, [answer, ...wrong]),
        answer,
        explanation,
      };
    }
    case "listening":
      return {
        prompt: "Listen and choose the sentence you hear.",
        audio_url: audioUrl(language, sentence[0]),
        options: shuffle(rng, [sentence[0], ...distinct(rng, bank.sentences, 2, sentence).map((s) => s[0])]),
        answer: sentence[0],
        transcript: sentence[0],
      };
    case "reading": {
      const [passage, question, answer, wrong] = pick(rng, bank.texts);
      return {
        prompt: "Read the text and answer the question.",
        passage,
        question,
        options: shuffle(rng, [answer, ...wrong]),
        answer,
      };
    }
    case "speaking":
      return {
        prompt: "Read the sentence aloud.",
        text: sentence[0],
        translation: sentence[1],
        model_audio_url: audioUrl(language, sentence[0]),
        min_score: 0.7,
      };
    case "writing": {
      const sentences = 2 + Math.floor(rng() * 3);
      return {
        prompt: `Write ${sentences} sentences in ${bank.name} about ${topic.noun}.`,
        min_words: sentences * 6,
        max_words: sentences * 20,
        rubric: ["Task achieved", "Vocabulary of the lesson used", "Grammar of the lesson used accurately"],
        example_answer: sentence[0],
      };
    }
    case "multiple_choice":
      return {
        prompt: `How do you say “${sentence[1]}” in ${bank.name}?`,
        options: shuffle(rng, [sentence[0], ...distinct(rng, bank.sentences, 2, sentence).map((s) => s[0])]),
        answer: sentence[0],
      };
    case "translation":
      return {
        prompt: `Translate into ${bank.name}.`,
        source: sentence[1],
        answer: sentence[0],
        accepted_answers: [sentence[0]],
      };
    case "matching": {
      const pairs = shuffle(rng, bank.words).slice(0, 4);
      return {
        prompt: "Match each word with its translation.",
        pairs: pairs.map(([left, right]) => ({ left, right })),
      };
    }
    default:
      throw new Error(`unknown item type ${type}`);
  }
}

function levelsBetween(from, to) {
  const a = CEFR_LEVELS.indexOf(from);
  const b = CEFR_LEVELS.indexOf(to);
  if (a < 0 || b < a) throw new Error(`bad CEFR range ${from}–${to}`);
  return CEFR_LEVELS.slice(a, b + 1);
}

function defaultDescription(spec, bank, levels, lessonCount, minutes) {
  const range = levels.length > 1 ? `${levels[0]}–${levels.at(-1)}` : levels[0];
  const goals = levels
    .flatMap((level) => TOPICS[level].slice(0, 2).map((t) => t[1]))
    .slice(0, 3)
    .join(", ");
  return [
    spec.intro ?? `A ${bank.name} course at CEFR level ${range}.`,
    `In ${lessonCount} lessons you will learn to ${goals}, and more.`,
    "Every lesson mixes vocabulary, grammar, listening, reading, speaking and writing practice and ends with a review.",
    `About ${Math.round(minutes / 60)} hours of study, aligned with the CEFR ${range} descriptors.`,
  ].join(" ");
}

/**
 * Every row of one course, as plain objects keyed by column name (JSON columns already encoded):
 * { course, courseTags, lessons, trainings, items }. Counts and minutes agree at every level.
 *
 * spec: { code (id suffix: crs_<code>, les_<code>_01, …), slug, title, language, source?, from, to,
 *   published, publishedAt?, createdAt, tags?, description?, intro?, lessons, blocksPerLesson,
 *   itemsPerBlock (each a number or [min, max]), seed }
 */
export function buildCourse(spec) {
  const rng = mulberry32(spec.seed ?? CATALOG_SEED);
  const bank = bankFor(spec.language);
  const levels = levelsBetween(spec.from, spec.to);
  const lessonCount = between(rng, spec.lessons);
  const courseId = `crs_${spec.code}`;
  const stamp = spec.createdAt;
  const lessons = [];
  const trainings = [];
  const items = [];

  const lessonsAtLevel = {};
  for (let l = 1; l <= lessonCount; l++) {
    // CEFR level rises through the course's range; topics and grammar start afresh at each level.
    const level = levels[Math.min(levels.length - 1, Math.floor(((l - 1) * levels.length) / lessonCount))];
    const n = lessonsAtLevel[level] ?? 0;
    lessonsAtLevel[level] = n + 1;
    const topics = TOPICS[level];
    const grammar = bank.grammar?.[level] ?? GENERIC_GRAMMAR[level];
    const isReview = lessonCount >= 8 && l % 8 === 0;
    const topic = topics[n % topics.length];
    const point = grammar[(n + Math.floor(n / topics.length)) % grammar.length];
    const lessonId = `les_${spec.code}_${pad(l)}`;
    const title = isReview ? `Review and progress check ${l / 8}` : `${topic[0]}: ${point}`;
    const objectives = isReview
      ? [
          `Consolidate lessons ${l - 7}–${l - 1}`,
          `Check your progress at level ${level}`,
          "Identify what to revise next",
        ]
      : [
          `Can ${topic[1]}`,
          `Use ${point} accurately`,
          `Learn ${8 + Math.floor(rng() * 8)} new words about ${topic[2]}`,
        ].slice(0, 2 + Math.floor(rng() * 2));

    const blockCount = between(rng, spec.blocksPerLesson);
    const kinds =
      BLOCK_KINDS[blockCount] ??
      Array.from(
        { length: blockCount },
        (_, i) => ["warm_up", "presentation", "practice", "review", "challenge"][i % 5],
      );
    const sizes = kinds.map(() => between(rng, spec.itemsPerBlock));
    // Item types: whole shuffled rounds of every type, so each lesson of 9+ items has them all.
    const total = sizes.reduce((a, b) => a + b, 0);
    const types = [];
    while (types.length < total) types.push(...shuffle(rng, ITEM_TYPES));

    let lessonSeconds = 0;
    let cursor = 0;
    kinds.forEach((kind, b) => {
      const trainingId = `trn_${spec.code}_${pad(l)}_${b + 1}`;
      for (let k = 1; k <= sizes[b]; k++) {
        const type = types[cursor++];
        const cost = ITEM_COST[type];
        lessonSeconds += cost.seconds;
        const xp = Math.max(
          5,
          Math.min(20, cost.xp + CEFR_LEVELS.indexOf(level) + Math.floor(rng() * 3) - 1),
        );
        items.push({
          id: `itm_${spec.code}_${pad(l)}_${b + 1}_${pad(k)}`,
          training_id: trainingId,
          lesson_id: lessonId,
          course_id: courseId,
          position: k,
          type,
          skill: skillFor(rng, type),
          cefr_level: level,
          xp,
          content: JSON.stringify(itemContent(rng, type, bank, spec.language, { noun: topic[2] })),
          created_at: stamp,
          updated_at: stamp,
        });
      }
      trainings.push({
        id: trainingId,
        lesson_id: lessonId,
        course_id: courseId,
        position: b + 1,
        kind,
        title: `${BLOCK_TITLES[kind]}: ${isReview ? "mixed review" : topic[2]}`,
        item_count: sizes[b],
        created_at: stamp,
        updated_at: stamp,
      });
    });

    lessons.push({
      id: lessonId,
      course_id: courseId,
      position: l,
      title,
      cefr_level: level,
      objectives: JSON.stringify(objectives),
      item_count: total,
      estimated_minutes: Math.ceil(lessonSeconds / 60),
      created_at: stamp,
      updated_at: stamp,
    });
  }

  const minutes = lessons.reduce((sum, l) => sum + l.estimated_minutes, 0);
  const tags = [...new Set(spec.tags ?? [])];
  const course = {
    id: courseId,
    slug: spec.slug,
    title: spec.title,
    description: spec.description ?? defaultDescription(spec, bank, levels, lessonCount, minutes),
    target_language: spec.language,
    source_language: spec.source ?? "en",
    cefr_from: spec.from,
    cefr_to: spec.to,
    published: spec.published ? 1 : 0,
    published_at: spec.published ? (spec.publishedAt ?? stamp) : null,
    lesson_count: lessonCount,
    item_count: items.length,
    estimated_minutes: minutes,
    tags: JSON.stringify(tags),
    created_at: stamp,
    updated_at: spec.publishedAt && spec.published ? spec.publishedAt : stamp,
  };
  return { course, courseTags: tags.map((tag) => ({ course_id: courseId, tag })), lessons, trainings, items };
}

// ---------------------------------------------------------------------------------------------
// The demo catalogue

const DEMO = { lessons: [36, 44], blocksPerLesson: [3, 5], itemsPerBlock: [8, 12] };

/** Twelve courses in five languages; exactly one (Japanese) is an unpublished draft. */
export const DEMO_COURSES = [
  {
    code: "demo_es_a1",
    slug: "spanish-a1-first-steps",
    title: "Spanish A1: First Steps",
    language: "es",
    from: "A1",
    to: "A1",
    tags: ["beginner", "everyday-life", "travel"],
    intro: "Your first Spanish: from ¡hola! to ordering tapas and finding your way around town.",
  },
  {
    code: "demo_es_a2",
    slug: "spanish-a2-everyday-conversations",
    title: "Spanish A2: Everyday Conversations",
    language: "es",
    from: "A2",
    to: "A2",
    tags: ["elementary", "conversation"],
    intro: "Talk about your past, your plans and your day with Spanish speakers.",
  },
  {
    code: "demo_es_b1",
    slug: "spanish-b1-confident-communication",
    title: "Spanish B1: Confident Communication",
    language: "es",
    from: "B1",
    to: "B1",
    tags: ["intermediate", "work", "culture"],
    intro: "Tell stories, give advice and hold your own at work in Spanish.",
  },
  {
    code: "demo_es_b2c1",
    slug: "advanced-spanish-debate-and-culture",
    title: "Advanced Spanish: Debate and Culture",
    language: "es",
    from: "B2",
    to: "C1",
    tags: ["advanced", "culture", "debate"],
    intro: "Argue, persuade and read between the lines of Spanish-language media and literature.",
  },
  {
    code: "demo_fr_a1",
    slug: "french-a1-bonjour",
    title: "French A1: Bonjour!",
    language: "fr",
    from: "A1",
    to: "A1",
    tags: ["beginner", "everyday-life"],
    intro: "Start speaking French from the very first lesson.",
  },
  {
    code: "demo_fr_a2b1",
    slug: "french-a2-b1-living-in-france",
    title: "French A2–B1: Living in France",
    language: "fr",
    from: "A2",
    to: "B1",
    tags: ["elementary", "intermediate", "travel", "culture"],
    intro: "Everything you need to settle in: housing, work, health and French social life.",
  },
  {
    code: "demo_fr_b2",
    slug: "business-french-b2",
    title: "Business French B2",
    language: "fr",
    from: "B2",
    to: "B2",
    tags: ["business", "work", "upper-intermediate"],
    intro: "Meetings, negotiations and formal writing for French-speaking workplaces.",
  },
  {
    code: "demo_de_a1",
    slug: "german-a1-guten-start",
    title: "German A1: Guten Start",
    language: "de",
    from: "A1",
    to: "A1",
    tags: ["beginner", "everyday-life"],
    intro: "A friendly start into German, with the grammar explained step by step.",
  },
  {
    code: "demo_de_a2",
    slug: "german-a2-everyday-life",
    title: "German A2: Everyday Life",
    language: "de",
    from: "A2",
    to: "A2",
    tags: ["elementary", "everyday-life"],
    intro: "Manage daily life in German-speaking countries with confidence.",
  },
  {
    code: "demo_de_b1b2",
    slug: "german-b1-b2-work-and-study",
    title: "German B1–B2: Work and Study",
    language: "de",
    from: "B1",
    to: "B2",
    tags: ["intermediate", "work", "exam-prep"],
    intro: "Prepare for study, work and the Goethe-Zertifikat B1 and B2 exams.",
  },
  {
    code: "demo_it_a1a2",
    slug: "italian-a1-a2-travel-italian",
    title: "Italian A1–A2: Travel Italian",
    language: "it",
    from: "A1",
    to: "A2",
    tags: ["beginner", "travel", "food"],
    intro: "The Italian you need for trains, trattorie and piazzas.",
  },
  {
    code: "demo_ja_a1",
    slug: "japanese-a1-hiragana-to-small-talk",
    title: "Japanese A1: Hiragana to Small Talk",
    language: "ja",
    from: "A1",
    to: "A1",
    tags: ["beginner", "writing-systems"],
    intro: "Learn hiragana and the first phrases for getting around in Japan.",
    draft: true,
  },
].map((course, i) => ({
  ...DEMO,
  ...course,
  published: !course.draft,
  createdAt: `2026-01-${pad(5 + i)}T09:00:00Z`,
  publishedAt: course.draft ? null : `2026-02-${pad(2 + i * 2)}T08:00:00Z`,
  seed: CATALOG_SEED + i,
}));

export function buildDemoCatalog() {
  return DEMO_COURSES.map((spec) => buildCourse(spec));
}

const TABLES = [
  ["courses", "course"],
  ["course_tags", "courseTags"],
  ["lessons", "lessons"],
  ["trainings", "trainings"],
  ["training_items", "items"],
];

const sqlValue = (v) =>
  v === null || v === undefined
    ? "NULL"
    : typeof v === "number"
      ? String(v)
      : `'${String(v).replace(/'/g, "''")}'`;

/** Multi-row INSERTs of at most ~40 KB each (D1 caps a statement at 100 KB). */
function insertStatements(table, rows) {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]);
  const head = `INSERT INTO ${table} (${columns.join(", ")}) VALUES\n`;
  const out = [];
  let values = [];
  let size = 0;
  const flush = () => {
    if (values.length > 0) out.push(`${head}${values.join(",\n")}\nON CONFLICT DO NOTHING;`);
    values = [];
    size = 0;
  };
  for (const row of rows) {
    const tuple = `(${columns.map((c) => sqlValue(row[c])).join(", ")})`;
    if (size + tuple.length > 40_000) flush();
    values.push(tuple);
    size += tuple.length;
  }
  flush();
  return out;
}

/** Idempotent SQL for the whole demo catalogue: the same text on every run. */
export function catalogSeedSql() {
  const catalog = buildDemoCatalog();
  const statements = [
    "-- Demo course catalogue, generated by scripts/catalog-data.mjs (deterministic; safe to run again).",
  ];
  for (const [table, key] of TABLES) {
    statements.push(
      ...insertStatements(
        table,
        catalog.flatMap((c) => [c[key]].flat()),
      ),
    );
  }
  return `${statements.join("\n")}\n`;
}
