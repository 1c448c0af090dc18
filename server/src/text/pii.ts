export type PiiHint = 'email' | 'phone';

const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/u;
// A run of digits with the usual separators, optionally with a + country code.
const PHONE_CANDIDATE = /(?<![\p{L}\p{N}])\+?\(?\d[\d ().-]{5,}\d(?![\p{L}\p{N}])/gu;
const DATE_LIKE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/;

function looksLikePhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return false;
  if (DATE_LIKE.test(candidate.trim())) return false;
  // A bare number (no +, separators or parentheses) shorter than 10 digits is more often an id.
  return /[+ ().-]/.test(candidate) || digits.length >= 10;
}

/**
 * Heuristic hints that the text contains an email address or a phone number. A hint, not a
 * classifier: it is there so an app can warn before storing personal data.
 */
export function scanPii(text: string): PiiHint[] {
  const hints: PiiHint[] = [];
  if (EMAIL.test(text)) hints.push('email');
  for (const match of text.matchAll(PHONE_CANDIDATE)) {
    if (looksLikePhone(match[0])) {
      hints.push('phone');
      break;
    }
  }
  return hints;
}
