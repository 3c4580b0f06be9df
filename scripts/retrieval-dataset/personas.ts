// The users of the conversations and the value pools the planted facts draw from.
// Pools only hold values that never occur in the filler (ctx.ts double-checks), so a
// name or a place in a question can only be found in the messages that plant it.

import type { Persona } from './util.js';

export interface PersonaSetup extends Persona {
  /** The football team filler small talk refers to (one per person, so it never contradicts). */
  team: string;
}

export const PERSONAS: readonly PersonaSetup[] = [
  { id: 'c1', name: 'Maya', gender: 'f', home: 'Bristol', start: '2024-03-04', seed: 1101, team: 'Arsenal' },
  { id: 'c2', name: 'Tom', gender: 'm', home: 'Manchester', start: '2024-01-08', seed: 2202, team: 'Liverpool' },
  { id: 'c3', name: 'Priya', gender: 'f', home: 'Leeds', start: '2024-05-13', seed: 3303, team: 'Aston Villa' },
  { id: 'c4', name: 'Daniel', gender: 'm', home: 'Glasgow', start: '2023-09-18', seed: 4404, team: 'Celtic' },
  { id: 'c5', name: 'Sofia', gender: 'f', home: 'Norwich', start: '2024-08-26', seed: 5505, team: 'Brighton' },
];

export const FEMALE = [
  'Dana', 'Ines', 'Kemi', 'Lena', 'Mira', 'Nadia', 'Greta', 'Hana', 'Elif', 'Fatima', 'Chloe', 'Bea', 'Ana', 'Jade',
  'Olga', 'Rosa', 'Tess', 'Yara', 'Zoe', 'Aisha', 'Bronwen', 'Carys', 'Delphine', 'Esme', 'Freya', 'Gemma', 'Harriet',
  'Imogen', 'Johanna', 'Keiko', 'Lucia', 'Marta', 'Niamh', 'Orla', 'Paloma', 'Rhiannon', 'Saoirse', 'Talia', 'Ursula',
  'Vera', 'Wren', 'Ximena', 'Yasmin', 'Zainab', 'Agnes', 'Beatriz', 'Celine', 'Dorota', 'Eilidh', 'Flora', 'Gabi',
  'Hattie', 'Ingrid', 'Jess', 'Kirsty', 'Leila', 'Mei', 'Noor', 'Petra', 'Ruth', 'Signe', 'Thea', 'Aoife', 'Bryony',
];
export const MALE = [
  'Tomasz', 'Luis', 'Ollie', 'Graham', 'Kwame', 'Rafael', 'Stefan', 'Arjun', 'Bilal', 'Callum', 'Declan', 'Emil',
  'Felix', 'Gareth', 'Hamish', 'Idris', 'Jonah', 'Kenji', 'Lorenzo', 'Marcus', 'Nikhil', 'Oscar', 'Pavel', 'Quentin',
  'Rhys', 'Sanjay', 'Theo', 'Umar', 'Viktor', 'Wilf', 'Yusuf', 'Zac', 'Alistair', 'Bruno', 'Caspar', 'Dmitri', 'Ewan',
  'Fergus', 'Gideon', 'Hugo', 'Ibrahim', 'Jamal', 'Kofi', 'Lars', 'Mateo', 'Niall', 'Omar', 'Piotr', 'Ravi', 'Sami',
  'Tobias', 'Vikram', 'Aled', 'Bastian', 'Cormac', 'Dev', 'Elliot', 'Finn', 'Gus', 'Henrik', 'Joaquin', 'Kieran',
];
export const SURNAMES = [
  'Okafor', 'Alvarez', 'Lindqvist', 'Brennan', 'Castellanos', 'Nakamura', 'Whitlock', 'Achterberg', 'Mensah', 'Fairbairn',
  'Kowalczyk', 'Haddad', 'Pemberton', 'Rasmussen', 'Oyelaran', 'Delacroix', 'Thistlewood', 'Varga',
];

export const PET_NAMES = [
  'Pepper', 'Miso', 'Biscuit', 'Luna', 'Mochi', 'Pickle', 'Nutmeg', 'Ziggy', 'Waffles', 'Juniper', 'Marmite', 'Pudding',
  'Crumpet', 'Noodle', 'Bramble', 'Fudge', 'Clementine', 'Sprout', 'Pistachio', 'Dumpling', 'Maple', 'Bingo', 'Moose',
  'Tinker', 'Pumpkin', 'Kipper', 'Sable', 'Truffle', 'Widget', 'Dougal', 'Hermione', 'Barnaby', 'Ptolemy', 'Custard',
];

/** Places abroad for trips, moves and jobs (never in the filler). */
export const ABROAD = [
  'Kyoto', 'Lisbon', 'Reykjavik', 'Seville', 'Krakow', 'Vienna', 'Marrakesh', 'Copenhagen', 'Naples', 'Tallinn',
  'Ljubljana', 'Porto', 'Bruges', 'Montreal', 'Hanoi', 'Oaxaca', 'Valencia', 'Bologna', 'Gothenburg', 'Dubrovnik',
  'Bergen', 'Salzburg', 'Toronto', 'Melbourne', 'Singapore', 'Athens', 'Budapest', 'Lyon', 'Rotterdam', 'Helsinki',
];
/** Small UK towns (never in the filler). */
export const UK_TOWNS = [
  'Whitby', 'Ludlow', 'Hexham', 'Tenby', 'Falmouth', 'Keswick', 'Aberystwyth', 'Stornoway', 'Lowestoft', 'Ripon',
  'Matlock', 'Frome', 'Oban', 'Hay-on-Wye', 'Alnwick', 'Kendal', 'Bideford', 'Dunbar', 'Rye', 'Skegness',
];
export const STREETS = [
  'Alder Road', 'Marsh Lane', 'Quarry Street', 'Linden Avenue', 'Cotton Row', 'Fenwick Terrace', 'Saltmarsh Close',
  'Harrow Crescent', 'Ivy Grove', 'Beacon Hill Road', 'Tanners Walk', 'Orchard Mews',
];
export const CAFES = [
  'Lantern', 'Two Magpies', 'The Copper Kettle', 'Bean & Gone', 'Little Owl', 'Morning Glory', 'Hearth', 'The Daily Grind',
  'Kin', 'Sorrel',
];
export const GYMS = ['The Foundry', 'Bloc Shop', 'Rockover', 'The Arch', 'Summit Works', 'Crux Barn'];
export const COMPANIES = [
  'Halyard', 'Northwind Analytics', 'Brightwell Insurance', 'Tidewater Labs', 'Greystone Energy', 'Pellucid Health',
  'Fernleaf Games', 'Corvid Logistics', 'Quillmark Publishing', 'Sandpiper Bank',
];
export const PROJECTS = ['Heron', 'Bluebell', 'Kestrel', 'Lighthouse', 'Tundra', 'Windmill', 'Osprey', 'Slate'];
export const BANDS = [
  'The Loose Ends', 'Velvet Tuesday', 'Static Orchard', 'The Half Pints', 'Paper Lanterns', 'Moth & Lamp',
  'The Wet Leaves', 'Second Breakfast',
];
export const RESTAURANTS = ['Rules', 'Dishoom', 'Padella', 'The Ivy', 'Hawksmoor', 'Rovi', 'Gymkhana', 'St John'];
