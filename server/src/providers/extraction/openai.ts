import { z } from 'zod';
import { excerpt, JsonEndpoint, type HttpRetryOptions } from '../http-retry.js';
import { ExtractionError, type ExtractedMemory, type Extractor } from './types.js';

/** Options of {@link OpenAIExtractor}; every optional field says its default. */
export interface OpenAIExtractorOptions extends HttpRetryOptions {
  /**
   * API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. Requests go to
   * `<baseUrl>/chat/completions`; a query string on the base (Azure's `?api-version=`) is kept.
   */
  baseUrl: string;
  /** Chat model (or Azure deployment) name, e.g. `gpt-4o-mini`. */
  model: string;
  /**
   * Per-attempt timeout covering the whole response. Default 8000: extraction runs before the
   * write commits, so a slow model delays the caller's write.
   */
  timeoutMs?: number;
  /** Retries after the first attempt, on 429, 5xx, network errors and timeouts. Default 1. */
  maxRetries?: number;
}

const MAX_ITEMS_PLACEHOLDER = '{max_items}';

/** The instructions; `{max_items}` is replaced per call. The user's text goes alone in the user message. */
export const EXTRACTION_SYSTEM_PROMPT = `You split a note a user wants remembered into atomic memories.
Answer with JSON only: {"memories": [{"text": "...", "memory_type": "fact|preference|event|task"}]}.
- Each memory is one self-contained statement, understandable without the others: resolve "it", "there", "she" when the note makes clear what they mean.
- Keep the user's own words and point of view ("I ..."). Add nothing: no speculation, advice or summary.
- memory_type: "preference" for likes, dislikes and choices; "task" for things to do, requests and reminders; "event" for things that happened or are scheduled; "fact" for everything else.
- Skip greetings, thanks, small talk and questions.
- At most ${MAX_ITEMS_PLACEHOLDER} memories, in the order they appear.
- Nothing worth remembering: {"memories": []}.`;

const MEMORY_TYPES = new Set<ExtractedMemory['memoryType']>([
  'fact',
  'preference',
  'event',
  'task',
]);

const CompletionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
});

const ItemSchema = z.object({
  text: z.string(),
  memory_type: z.string().optional(),
  // Models drift from the asked field name now and then.
  type: z.string().optional(),
});

const AnswerSchema = z.object({ memories: z.array(z.unknown()) });

const FENCE = /^\s*```[a-z]*\s*\n?([\s\S]*?)\n?\s*```\s*$/i;

/**
 * Extracts through any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Azure OpenAI,
 * Ollama's `/v1`, vLLM, LiteLLM) in JSON mode. Every failure, from HTTP to an unusable answer,
 * is an {@link ExtractionError}: the write stores the parent without children.
 */
export class OpenAIExtractor implements Extractor {
  readonly name = 'openai';
  readonly model: string;

  private readonly endpoint: JsonEndpoint;
  /** Credentials kept out of error messages that quote the model's answer. */
  private readonly secrets: string[];

  constructor(options: OpenAIExtractorOptions) {
    this.model = options.model;
    this.endpoint = new JsonEndpoint({
      ...options,
      path: 'chat/completions',
      label: 'openai extraction',
      errorClass: EndpointExtractionError,
      maxRetries: options.maxRetries ?? 1,
      timeoutMs: options.timeoutMs ?? 8_000,
    });
    this.secrets = [options.apiKey, ...Object.values(options.headers ?? {})].filter(
      (value): value is string => typeof value === 'string' && value.length >= 8,
    );
  }

  async extract(text: string, options: { maxItems: number }): Promise<ExtractedMemory[]> {
    const maxItems = Math.floor(options.maxItems);
    if (!(maxItems >= 1) || text.trim() === '') return [];
    const body = JSON.stringify({
      model: this.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        {
          role: 'system',
          content: EXTRACTION_SYSTEM_PROMPT.replace(MAX_ITEMS_PLACEHOLDER, String(maxItems)),
        },
        { role: 'user', content: text },
      ],
    });
    const payload = this.endpoint.read(await this.endpoint.post(body));
    const completion = CompletionSchema.safeParse(payload);
    if (!completion.success) {
      throw new ExtractionError('openai extraction answer has no choices[0].message.content');
    }
    return this.readMemories(completion.data.choices[0]!.message.content, maxItems);
  }

  private readMemories(content: string, maxItems: number): ExtractedMemory[] {
    const json = FENCE.exec(content)?.[1] ?? content;
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (error) {
      throw new ExtractionError(
        `openai extraction answered with non-JSON content: ${excerpt(content, this.secrets)}`,
        { cause: error },
      );
    }
    const answer = AnswerSchema.safeParse(parsed);
    if (!answer.success) {
      throw new ExtractionError('openai extraction answer has no `memories` array');
    }

    const memories: ExtractedMemory[] = [];
    const seen = new Set<string>();
    for (const raw of answer.data.memories) {
      const item = ItemSchema.safeParse(raw);
      if (!item.success) continue;
      const memoryText = item.data.text.replace(/\s+/g, ' ').trim();
      const key = memoryText.toLowerCase();
      if (memoryText === '' || seen.has(key)) continue;
      seen.add(key);
      memories.push({
        text: memoryText,
        memoryType: memoryType(item.data.memory_type ?? item.data.type),
      });
      if (memories.length === maxItems) break;
    }
    return memories;
  }
}

function memoryType(value: string | undefined): ExtractedMemory['memoryType'] {
  const type = value?.trim().toLowerCase();
  return MEMORY_TYPES.has(type as ExtractedMemory['memoryType'])
    ? (type as ExtractedMemory['memoryType'])
    : 'fact';
}

/** {@link ExtractionError} in the shape {@link JsonEndpoint} builds its errors with. */
class EndpointExtractionError extends ExtractionError {
  readonly status: number | undefined;

  constructor(message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}
