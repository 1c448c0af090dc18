import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { ClaimedDelivery } from '../../db/queries/webhooks.js';
import { publicOnlyLookup, refusedAddressReason, urlHost } from './addresses.js';
import type { SecretBox } from './secrets.js';

export interface AttemptResult {
  ok: boolean;
  /** The endpoint's HTTP status; null when none answered. */
  responseStatus: number | null;
  /** Why it failed, in a few words (never a response body, never a secret). */
  error: string | null;
}

export interface SendSettings {
  secrets: SecretBox;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-signature` holds `v1,<base64 HMAC-SHA256
 * of "id.timestamp.body">` under the current secret, and a second one, space-separated, under the
 * secret before a rotation while it still signs.
 */
export function signedHeaders(
  claim: Pick<
    ClaimedDelivery,
    'eventId' | 'body' | 'secretCiphertext' | 'previousSecretCiphertext'
  >,
  secrets: SecretBox,
  now: Date,
): Record<string, string> {
  const keys = [secrets.open(claim.secretCiphertext)];
  if (claim.previousSecretCiphertext !== null) {
    // A previous secret sealed under an encryption key since replaced: the current one signs alone.
    const previous = tryOpen(secrets, claim.previousSecretCiphertext);
    if (previous !== undefined) keys.push(previous);
  }
  const signatures = keys.map((key) => new Webhook(key).sign(claim.eventId, now, claim.body));
  return {
    'webhook-id': claim.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

function tryOpen(secrets: SecretBox, sealed: string): string | undefined {
  try {
    return secrets.open(sealed);
  } catch {
    return undefined;
  }
}

/**
 * One attempt: POST the stored body, signed, within `timeoutMs` (connect, send and answer).
 * Redirects are not followed (a 3xx is a failure), so a public endpoint cannot bounce the request
 * inward; unless private addresses are allowed, the host's addresses are checked at connection
 * time, on the answer the connection uses.
 */
export async function attemptDelivery(
  claim: ClaimedDelivery,
  { secrets, timeoutMs, allowPrivate }: SendSettings,
): Promise<AttemptResult> {
  const url = new URL(claim.url);
  const literal = urlHost(url);
  if (!allowPrivate && isIP(literal)) {
    const reason = refusedAddressReason(literal);
    if (reason) return { ok: false, responseStatus: null, error: `refused: ${reason}` };
  }
  const headers = {
    ...signedHeaders(claim, secrets, new Date()),
    'content-type': 'application/json',
    'user-agent': 'Mnemo-Webhooks/1',
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptResult>((resolve) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(claim.body) },
        signal: AbortSignal.timeout(timeoutMs),
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        // The body is not kept: drained so the socket closes cleanly.
        res.resume();
        res.on('end', () =>
          resolve(
            status >= 200 && status < 300
              ? { ok: true, responseStatus: status, error: null }
              : { ok: false, responseStatus: status, error: `HTTP ${status}` },
          ),
        );
        res.on('error', () =>
          resolve({ ok: false, responseStatus: status, error: 'response interrupted' }),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ ok: false, responseStatus: null, error: describeFailure(error, timeoutMs) }),
    );
    req.end(claim.body);
  });
}

function describeFailure(error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs} ms`;
  }
  if (error.code === 'EADDRNOTPUBLIC') return error.message;
  return error.code ? `connection failed (${error.code})` : 'connection failed';
}
