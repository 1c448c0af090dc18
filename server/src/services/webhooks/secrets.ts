import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Writer } from '../../db/client.js';
import { getOrCreateSetting } from '../../db/queries/settings.js';

const KEY_SETTING = 'webhook_encryption_key';
const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: a secret is 24 to 64 random bytes; 32 is the usual choice. */
const SECRET_BYTES = 32;
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const FORMAT = 'v1';

/** A fresh signing secret: `whsec_` + base64 of random bytes, as Standard Webhooks writes it. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * Encrypts signing secrets at rest. A secret must be readable to sign with, so it cannot be
 * hashed like an API key; the key comes from MNEMO_WEBHOOKS_ENCRYPTION_KEY, or is generated once
 * and kept in the server settings (a database dump then holds both: set the variable to keep
 * them apart).
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static async open(db: Writer, configuredKey: string | undefined): Promise<SecretBox> {
    const material =
      configuredKey ??
      (await getOrCreateSetting(db, KEY_SETTING, () => randomBytes(32).toString('base64')));
    // Any string of 32+ characters names the key; hashing gives exactly the 32 bytes AES-256 takes.
    return new SecretBox(createHash('sha256').update(material).digest());
  }

  seal(secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [FORMAT, ...[iv, tag, ciphertext].map((part) => part.toString('base64'))].join(':');
  }

  /** Throws when the sealed value was made under another key or altered. */
  open(sealed: string): string {
    const [format, iv, tag, ciphertext] = sealed.split(':');
    if (format !== FORMAT || !iv || !tag || !ciphertext) {
      throw new Error('not a sealed webhook secret');
    }
    const decipher = createDecipheriv(CIPHER, this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64')),
      decipher.final(),
    ]).toString('utf8');
  }
}
