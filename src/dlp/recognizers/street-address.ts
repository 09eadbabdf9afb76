import { PatternRecognizer } from './pattern-recognizer.ts';

const CAP = String.raw`\p{Lu}[\p{L}\p{M}'’.-]*`;
const HOUSE = String.raw`\d{1,5}(?: ?[a-zA-Z](?![\p{L}]))?(?: ?[-/] ?\d{1,4})?`;
/** An apartment, suite, unit or floor after the street: `, Apt 4B`, `Suite 300`, `#14`, `, 3º B`, `piano 2`. */
const UNIT = String.raw`(?:,? (?:Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Floor|Fl\.?|Room|Bldg\.?|Building|Wohnung|Whg\.|piano|int\.|interno|escalera|puerta|bajo|étage|appt\.?|bât\.?) ?#?[\p{L}\d-]{1,5}\.?|,? #\d{1,5}|, \d{1,2}\.?[º°ª]\.? ?(?:[A-Z]|izq\.?|dcha\.?)?)`;
/** Postcode and town after the street: US `Springfield, IL 62704`, Canada `Toronto, ON M5V 2T6`, UK `London SW1A 1AA`, `10115 Berlin`, `3511 AB Utrecht`, `75002 Paris`. */
const TOWN = String.raw`(?:, (?:${CAP}(?: ${CAP}){0,2},? (?:[A-Z]{2} (?:\d{5}(?:-\d{4})?|[A-Z]\d[A-Z] \d[A-Z]\d)|[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2})|\d{4,5}(?: [A-Z]{2})? ${CAP}(?: ${CAP}){0,2}))`;

const EN_TYPES = String.raw`(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Lane|Ln\.?|Boulevard|Blvd\.?|Drive|Dr\.?|Court|Ct\.?|Way|Place|Pl\.?|Terrace|Close|Crescent|Square|Sq\.?|Parkway|Pkwy\.?|Highway|Hwy\.?|Circle|Row|Walk|Gardens|Grove|Mews)`;
/** `1234 N Maple Avenue, Apt 5B, Springfield, IL 62704`, `221B Baker Street`. */
const ENGLISH = new RegExp(
  String.raw`(?<![\p{L}\p{N}.,])${HOUSE} (?:[NSEW]\.? )?(?:${CAP} ){1,3}${EN_TYPES}(?![\p{L}])${UNIT}?${TOWN}?`,
  'gu',
);

const GLUED = String.raw`(?:straße|strasse|str\.|weg|allee|gasse|platz|damm|chaussee|pfad|steig|straat|laan|gracht|plein|kade|dijk|singel|gatan|vägen|gade|vej)`;
/** `Lindenweg 3a, 10115 Berlin`, `Berliner Straße 12`, `Am Markt 5`, `Kerkstraat 25, 3511 AB Utrecht`, `Storgatan 4`. */
const GERMANIC = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:\p{Lu}[\p{Ll}\p{M}ß-]+${GLUED}|\p{Lu}[\p{Ll}\p{M}ß-]{2,}ring|${CAP} (?:Straße|Strasse|Str\.|Weg|Allee|Platz|Gasse|Damm)|(?:Am|An der|Auf dem|Im|In der|Zum|Zur|Unter den) ${CAP}) ${HOUSE}(?![\p{N}])${UNIT}?${TOWN}?`,
  'gu',
);

const FR_TYPES = String.raw`(?:[Rr]ue|[Aa]venue|[Aa]v\.|[Bb]oulevard|[Bb]d|[Pp]lace|[Cc]hemin|[Aa]llée|[Ii]mpasse|[Qq]uai|[Cc]ours|[Rr]oute|[Ss]quare|[Pp]assage)`;
const FR_LINK = String.raw`(?:(?:de|du|des|de la|la|le|les) |[dl][’'])`;
/** `12 rue de la Paix, 75002 Paris`, `3 bis avenue Victor Hugo`. */
const FRENCH = new RegExp(
  String.raw`(?<![\p{L}\p{N}.,])\d{1,4}(?: ?(?:bis|ter)| ?[a-zA-Z](?![\p{L}]))?,? ${FR_TYPES} ${FR_LINK}*${CAP}(?: ${FR_LINK}*${CAP}){0,3}${TOWN}?`,
  'gu',
);

const ROMANCE_TYPES = String.raw`(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Pza\.|Camino|Carrera|Ronda|Travesía|Via|Viale|Corso|Piazza|Piazzale|Largo|Vicolo|Rua|Travessa|Praça|Estrada|Alameda)`;
const ROMANCE_LINK = String.raw`(?:(?:de|del|de la|de los|la|las|los|da|das|do|dos|di|della|delle|dei|degli) )`;
/** `Calle Mayor 15, 3º B, 28013 Madrid`, `C/ de Alcalá, 45`, `Via Roma 10`, `Rua das Flores 123`. */
const ROMANCE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])${ROMANCE_TYPES} ${ROMANCE_LINK}*${CAP}(?: ${ROMANCE_LINK}*${CAP}){0,3},? (?:n[º°o]\.? ?)?${HOUSE}(?![\p{N}])${UNIT}?${TOWN}?`,
  'gu',
);

/**
 * Street addresses: a house number, capitalised street words and a street
 * type in English, German and Dutch (glued `-straße`, `-weg`, `-straat`),
 * French, Spanish, Italian and Portuguese layouts, with an apartment or
 * suite part and a postcode and town when they follow, all one finding.
 * 1.0: a house number, street words and a street type are as specific as a
 * validated format, and a lower score would let a name or town inside the
 * address (`from Corso Vittorio Emanuele 19`: a surname and a first name
 * after "from") win the overlap and leave the rest of the address behind.
 * Off unless listed in DLP_ENTITIES.
 */
export function streetAddressRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'street-address',
    entity: 'STREET_ADDRESS',
    patterns: [
      { name: 'english', regex: ENGLISH, score: 1 },
      { name: 'germanic', regex: GERMANIC, score: 1 },
      { name: 'french', regex: FRENCH, score: 1 },
      { name: 'romance', regex: ROMANCE, score: 1 },
    ],
    normalize: (value) => value.toLowerCase().replace(/\s+/g, ' '),
  });
}
