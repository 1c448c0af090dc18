import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { isRecord, JsonEndpoint } from '../http-retry.js';
import type {
  CallbackSummary,
  CheckoutForm,
  CheckoutOrder,
  IncomingCallback,
  PaymentProvider,
  ProbeResult,
  Verification,
} from './types.js';

/** Thrown inside the adapter only; callers get a `Verification` of kind `unavailable`. */
export class PaymentProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PaymentProviderError';
  }
}

export interface PayuOptions {
  key: string;
  salt: string;
  /** Hosted checkout page (`https://secure.payu.in/_payment`, test: `https://test.payu.in/_payment`). */
  formUrl: string;
  /** Post-service API (`https://info.payu.in/merchant/postservice.php?form=2`). */
  verifyUrl: string;
  successUrl: string;
  failureUrl: string;
  /** Fallback callback signature: HMAC-SHA256 of the raw body in `x-pay-webhook-signature`. */
  webhookSecret?: string;
  timeoutMs: number;
  maxRetries: number;
  probeTimeoutMs: number;
  /** Tests: retry backoff base and sleep. */
  retryBaseMs?: number;
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
}

export const SIGNATURE_HEADER = 'x-pay-webhook-signature';

const sha512 = (text: string) => createHash('sha512').update(text, 'utf8').digest('hex');

/** Constant time over equal-length digests (hex strings of the same algorithm). */
function sameDigest(given: string, expected: string): boolean {
  const a = Buffer.from(given.trim().toLowerCase(), 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const udfs = (fields: Record<string, string>) =>
  [1, 2, 3, 4, 5].map((n) => fields[`udf${n}`] ?? '');

/** sha512(key|txnid|amount|productinfo|firstname|email|udf1|udf2|udf3|udf4|udf5||||||salt) */
export function payuRequestHash(fields: Record<string, string>, salt: string): string {
  const f = (name: string) => fields[name] ?? '';
  return sha512(
    [
      f('key'),
      f('txnid'),
      f('amount'),
      f('productinfo'),
      f('firstname'),
      f('email'),
      ...udfs(fields),
      '',
      '',
      '',
      '',
      '',
      salt,
    ].join('|'),
  );
}

/**
 * The reverse hash PayU signs its response with:
 * sha512([additional_charges|]salt|status||||||udf5|udf4|udf3|udf2|udf1|email|firstname|productinfo|amount|txnid|key)
 */
export function payuResponseHash(fields: Record<string, string>, salt: string): string {
  const f = (name: string) => fields[name] ?? '';
  const parts = [
    salt,
    f('status'),
    '',
    '',
    '',
    '',
    '',
    ...udfs(fields).reverse(),
    f('email'),
    f('firstname'),
    f('productinfo'),
    f('amount'),
    f('txnid'),
    f('key'),
  ];
  const charges = f('additional_charges');
  return sha512((charges ? [charges, ...parts] : parts).join('|'));
}

/** sha512(key|command|var1|salt): the hash of PayU's command APIs. */
export function payuCommandHash(key: string, command: string, var1: string, salt: string): string {
  return sha512([key, command, var1, salt].join('|'));
}

function normalizeStatus(status: string): 'success' | 'failure' | 'pending' {
  const value = status.trim().toLowerCase();
  if (value === 'success') return 'success';
  if (value === 'pending' || value === 'in progress') return 'pending';
  return 'failure';
}

/** JsonEndpoint posts to `baseUrl` + `path`: split the configured URL, keeping its query. */
function splitUrl(url: string): { baseUrl: string; path: string } {
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/');
  const path = segments.pop() ?? '';
  parsed.pathname = segments.join('/') || '/';
  return { baseUrl: parsed.toString(), path };
}

/** PayU India hosted checkout (INR): request hash, reverse response hash, `verify_payment`. */
export class PayuProvider implements PaymentProvider {
  readonly name = 'payu';
  private readonly endpoint: JsonEndpoint;

  constructor(private readonly options: PayuOptions) {
    this.endpoint = new JsonEndpoint({
      ...splitUrl(options.verifyUrl),
      label: 'payu verify_payment',
      errorClass: PaymentProviderError,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      maxRetries: options.maxRetries,
      timeoutMs: options.timeoutMs,
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  checkoutForm(order: CheckoutOrder): CheckoutForm {
    const fields: Record<string, string> = {
      key: this.options.key,
      txnid: order.txnid,
      amount: order.amount,
      productinfo: order.productInfo,
      firstname: order.firstname,
      email: order.email,
      ...(order.phone ? { phone: order.phone } : {}),
      udf1: order.workspaceId,
      surl: this.options.successUrl,
      furl: this.options.failureUrl,
    };
    fields.hash = payuRequestHash(fields, this.options.salt);
    return { url: this.options.formUrl, fields };
  }

  verifySignature({ fields, rawBody, header }: IncomingCallback): boolean {
    if (fields.hash && fields.key === this.options.key) {
      if (sameDigest(fields.hash, payuResponseHash(fields, this.options.salt))) return true;
    }
    const signature = header(SIGNATURE_HEADER);
    if (signature && this.options.webhookSecret) {
      const expected = createHmac('sha256', this.options.webhookSecret)
        .update(rawBody)
        .digest('hex');
      return sameDigest(signature.replace(/^sha256=/i, ''), expected);
    }
    return false;
  }

  summarize(fields: Record<string, string>): CallbackSummary | undefined {
    const txnid = fields.txnid?.trim();
    const rawStatus = fields.status?.trim();
    const amount = fields.amount?.trim();
    if (!txnid || !rawStatus || !amount) return undefined;
    const providerPaymentId = fields.mihpayid?.trim() ?? '';
    return {
      txnid,
      status: normalizeStatus(rawStatus),
      rawStatus,
      amount,
      productInfo: fields.productinfo?.trim() ?? '',
      workspaceId: fields.udf1?.trim() ?? '',
      providerPaymentId,
      eventKey: [txnid, rawStatus.toLowerCase(), providerPaymentId].join(':'),
    };
  }

  async verifyTransaction(txnid: string): Promise<Verification> {
    const { key, salt } = this.options;
    const command = 'verify_payment';
    const body = new URLSearchParams({
      key,
      command,
      var1: txnid,
      hash: payuCommandHash(key, command, txnid, salt),
    }).toString();
    let answer: unknown;
    try {
      answer = this.endpoint.read(await this.endpoint.post(body));
    } catch (error) {
      return { kind: 'unavailable', reason: (error as Error).message };
    }
    // {status: 1, msg, transaction_details: {<txnid>: {status, mihpayid, amt, ...}}}
    const details = isRecord(answer) ? answer.transaction_details : undefined;
    const record = isRecord(details) ? details[txnid] : undefined;
    if (!isRecord(record) || typeof record.status !== 'string') {
      return {
        kind: 'unavailable',
        reason: 'payu verify_payment answered without the transaction',
      };
    }
    if (record.status.trim().toLowerCase() === 'not found') return { kind: 'not_found' };
    const amount = record.transaction_amount ?? record.amt;
    if (typeof amount !== 'string' && typeof amount !== 'number') {
      return { kind: 'unavailable', reason: 'payu verify_payment answered without an amount' };
    }
    return {
      kind: 'found',
      status: normalizeStatus(record.status),
      rawStatus: record.status,
      amount: String(amount),
      providerPaymentId: typeof record.mihpayid === 'string' ? record.mihpayid : '',
    };
  }

  async probe(): Promise<ProbeResult> {
    const started = Date.now();
    const fetchImpl = this.options.fetch ?? globalThis.fetch;
    try {
      // Any HTTP answer means the API is reachable; nothing is verified.
      const response = await fetchImpl(this.options.verifyUrl, {
        method: 'GET',
        signal: AbortSignal.timeout(this.options.probeTimeoutMs),
      });
      await response.body?.cancel();
      return { reachable: response.status < 500, latencyMs: Date.now() - started };
    } catch (error) {
      return {
        reachable: false,
        latencyMs: Date.now() - started,
        error: (error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message,
      };
    }
  }
}
