import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body's `type`. */
  type: string;
  /** The parsed body's `data.memory_id`. */
  memoryId: string | null;
  /** The status the receiver answered. */
  answered: number;
}

/**
 * A real HTTP receiver on loopback: records every request and answers what `respond` says
 * (200 unless told otherwise), so tests can fail deliveries on purpose.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  respond: (request: Omit<ReceivedWebhook, 'answered'>) => number = () => 200;
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let parsed: { type?: string; data?: { memory_id?: string | null } } = {};
        try {
          parsed = JSON.parse(body) as typeof parsed;
        } catch {
          // Recorded as it came: the test asserts on it.
        }
        const request = {
          path: req.url ?? '',
          headers: req.headers,
          body,
          type: parsed.type ?? '',
          memoryId: parsed.data?.memory_id ?? null,
        };
        const answered = this.respond(request);
        this.received.push({ ...request, answered });
        res.statusCode = answered;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  url(path: string): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  on(path: string): ReceivedWebhook[] {
    return this.received.filter((entry) => entry.path === path);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
