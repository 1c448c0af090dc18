import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  payuCommandHash,
  payuRequestHash,
  payuResponseHash,
} from '../../src/providers/payments/payu.js';

/** How the fake's verification API answers. */
export type VerifyMode = 'ok' | 'slow' | '5xx' | 'malformed';

interface Charge {
  status: 'success' | 'failure';
  amount: string;
  mihpayid: string;
  fields: Record<string, string>;
}

/**
 * A fake PayU on loopback: the hosted form (`POST /_payment`) checks the request hash and
 * "charges" the order, answering with the callback fields PayU would post back, signed with the
 * salt; the post-service API (`POST /merchant/postservice.php?form=2`) answers `verify_payment`
 * from the charges, or slowly, with a 5xx, or malformed.
 */
export class FakePayu {
  verifyMode: VerifyMode = 'ok';
  /** The next payment's outcome. */
  paymentStatus: 'success' | 'failure' = 'success';
  /** Sign (as PayU would) a different amount than the order's: a provider-side mismatch. */
  chargeAmountOverride: string | undefined;
  /** Sign a different udf1 (workspace) than the order's. */
  udf1Override: string | undefined;
  /** Report a different amount from the verification API than was charged. */
  verifyAmountOverride: string | undefined;
  verifyCalls = 0;
  slowMs = 2_000;
  readonly charges = new Map<string, Charge>();
  private server: Server | undefined;
  private nextId = 403993715500000000n;

  constructor(
    readonly key: string,
    readonly salt: string,
  ) {}

  url = '';
  get formUrl() {
    return `${this.url}/_payment`;
  }
  get verifyUrl() {
    return `${this.url}/merchant/postservice.php?form=2`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        ({ status, body, type }) => {
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': type ?? 'application/json' });
          res.end(body);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(
    req: IncomingMessage,
  ): Promise<{ status: number; body: string; type?: string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/_payment') return this.pay(form);
    if (path === '/merchant/postservice.php') {
      if (req.method === 'GET') return { status: 200, body: 'postservice', type: 'text/plain' };
      return this.verify(form);
    }
    return { status: 404, body: '{}' };
  }

  /** The hosted page: a valid order is charged and answered with PayU's callback fields. */
  private pay(form: Record<string, string>) {
    if (form.key !== this.key || form.hash !== payuRequestHash(form, this.salt)) {
      return { status: 400, body: JSON.stringify({ error: 'invalid hash' }) };
    }
    const mihpayid = String((this.nextId += 1n));
    const callback: Record<string, string> = {
      mihpayid,
      mode: 'CC',
      status: this.paymentStatus,
      unmappedstatus: this.paymentStatus === 'success' ? 'captured' : 'failed',
      key: this.key,
      txnid: form.txnid ?? '',
      amount: this.chargeAmountOverride ?? form.amount ?? '',
      productinfo: form.productinfo ?? '',
      firstname: form.firstname ?? '',
      email: form.email ?? '',
      phone: form.phone ?? '',
      udf1: this.udf1Override ?? form.udf1 ?? '',
      udf2: form.udf2 ?? '',
      udf3: form.udf3 ?? '',
      udf4: form.udf4 ?? '',
      udf5: form.udf5 ?? '',
      error: 'E000',
      error_Message: 'No Error',
      bank_ref_num: '018323012116',
    };
    callback.hash = payuResponseHash(callback, this.salt);
    this.charges.set(callback.txnid!, {
      status: this.paymentStatus,
      amount: callback.amount!,
      mihpayid,
      fields: callback,
    });
    return { status: 200, body: JSON.stringify(callback) };
  }

  private async verify(form: Record<string, string>) {
    this.verifyCalls += 1;
    const { key = '', command = '', var1 = '', hash = '' } = form;
    if (this.verifyMode === '5xx')
      return { status: 503, body: 'upstream unavailable', type: 'text/plain' };
    if (this.verifyMode === 'slow')
      await new Promise((resolve) => setTimeout(resolve, this.slowMs));
    if (this.verifyMode === 'malformed')
      return { status: 200, body: '<html>oops', type: 'text/html' };
    if (
      key !== this.key ||
      command !== 'verify_payment' ||
      hash !== payuCommandHash(key, command, var1, this.salt)
    ) {
      return { status: 200, body: JSON.stringify({ status: 0, msg: 'Invalid Hash.' }) };
    }
    const charge = this.charges.get(var1);
    const details = charge
      ? {
          mihpayid: charge.mihpayid,
          txnid: var1,
          status: charge.status,
          amt: this.verifyAmountOverride ?? charge.amount,
          transaction_amount: this.verifyAmountOverride ?? charge.amount,
          unmappedstatus: charge.status === 'success' ? 'captured' : 'failed',
        }
      : { mihpayid: 'Not Found', status: 'Not Found' };
    return {
      status: 200,
      body: JSON.stringify({
        status: charge ? 1 : 0,
        msg: `${charge ? 1 : 0} out of 1 Transactions Fetched Successfully`,
        transaction_details: { [var1]: details },
      }),
    };
  }
}
