import type { ContextRule } from '../recognizer.ts';

/**
 * Words that announce (or rule out) a phone number, in the languages of the
 * default phone regions' largest user groups: English, German, French,
 * Spanish, Portuguese, Italian, Dutch, Polish, Turkish, Indonesian. They
 * compare as whole lower-cased words, or by prefix when they end in `*`.
 */
export const PHONE_CONTEXT: ContextRule = {
  positive: [
    'phone*', 'tel', 'tél', 'telephone', 'téléphone', 'telefon*', 'telefone', 'teléfono', 'telefono', 'telepon', 'tlf', 'tfn', 'ph', 'm', 't',
    'mobile', 'mobil*', 'móvil', 'movil', 'cellulare', 'celular', 'cell*', 'handy', 'portable', 'gsm', 'hp', 'landline', 'hotline',
    'call*', 'callback', 'ring', 'dial*', 'reach*', 'text*', 'sms', 'whatsapp', 'signal', 'viber', 'fax', 'contact*', 'kontakt*', 'contatt*', 'contato',
    'ruf*', 'anruf*', 'erreichbar', 'nummer', 'number', 'numéro', 'numero', 'número', 'appel*', 'appelez', 'llam*', 'llámame', 'ligue', 'ligar', 'chiam*',
    'bel', 'bellen', 'zadzwoń', 'numer', 'ara', 'arayın', 'hubungi', 'answer*', 'messag*', 'voicemail',
  ],
  negative: ['order*', 'invoice*', 'ref', 'reference', 'tracking', 'account*', 'acct', 'id', 'isbn', 'sku', 'serial', 'case', 'ticket*', 'po', 'transaction*', 'confirmation', 'booking', 'build', 'version', 'badge', 'bestell*', 'rechnung*', 'commande', 'facture', 'pedido', 'factura', 'card', 'licence', 'license', 'passport', 'ssn', 'ahv', 'avs'],
};
