import {
  LIMITS,
  type ContextResult,
  type Metadata,
  type MemoryType,
  type RetrievalProfile,
} from '@mnemo/client';
import type { LanguageModelMiddleware } from 'ai';
import { ownerParams, scopeParams, writeMetadata, type MnemoBaseOptions } from './options.js';
import {
  answerText,
  lastUserText,
  withSystemMessage,
  type CallOptions,
  type GenerateResult,
  type StreamPart,
} from './prompt.js';

/**
 * What the middleware stores after a turn: the user's last message (`user`, the default: what
 * users say about themselves is what later turns need), the model's answer (`assistant`), both
 * as one memory of the exchange (`turn`, written `user: …` / `assistant: …` like the server's
 * conversation ingest), or nothing (`false`).
 */
export type RememberMode = 'user' | 'assistant' | 'turn' | false;

/** Where a failure happened: fetching the context, or storing the turn. */
export type MnemoMemoryStage = 'recall' | 'remember';

/** How one store after a turn ended. */
export type RememberOutcome =
  { status: 'stored'; memoryId: string; deduped: boolean } | { status: 'failed'; error: unknown };

/** Options of {@link mnemoMemory}. */
export interface MnemoMemoryOptions extends MnemoBaseOptions {
  /**
   * Fetch the owner's context for the user's last message and put it in a system message before
   * the model runs (default true).
   */
  recall?: boolean | undefined;
  /** Memories in the context at most (the server's default when absent). */
  topK?: number | undefined;
  /** The context's ranking preset (the server's default, `balanced`, when absent). */
  retrievalProfile?: RetrievalProfile | undefined;
  /**
   * The system message for a context; `undefined` adds none. The default explains the numbered
   * lines; it is not called when nothing relevant is remembered.
   */
  formatContext?: ((context: ContextResult) => string | undefined) | undefined;
  /** What to store after a turn (default `'user'`): see {@link RememberMode}. */
  remember?: RememberMode | undefined;
  /**
   * Decides whether a finished turn is worth storing (default: every turn with text), e.g. to
   * skip greetings: `({ userText }) => (userText?.length ?? 0) > 20`.
   */
  shouldRemember?: ((turn: { userText?: string; answerText: string }) => boolean) | undefined;
  /**
   * Whether the server extracts atomic memories from what is stored (default: the server's,
   * which extracts when the plan and budget allow).
   */
  extract?: boolean | undefined;
  /** The type of the stored memories (the server's default when absent). */
  memoryType?: MemoryType | undefined;
  /** Metadata kept on every stored memory (besides `ingest: "ai-sdk"` and `roles`). */
  metadata?: Metadata | undefined;
  /**
   * Called when fetching the context or storing a turn fails. Neither failure reaches the
   * caller: without its context the model still answers, and a store never holds the answer
   * back. Without this option failures are dropped (`flush()` still reports store failures).
   */
  onError?: ((error: unknown, stage: MnemoMemoryStage) => void) | undefined;
  /** Called when a store after a turn ends, with how it ended. */
  onRemembered?: ((outcome: RememberOutcome) => void) | undefined;
}

/** The middleware, plus a way to wait for the stores it started. */
export interface MnemoMemoryMiddleware extends LanguageModelMiddleware {
  /**
   * Resolves when every store started so far has ended (never rejects: failures go to
   * `onError`, outcomes to `onRemembered`). Stores run after the answer and are never awaited
   * by it: await this where the process may stop right after the response (a serverless
   * function: `waitUntil(memory.flush())`), or in tests.
   */
  flush(): Promise<void>;
}

/** What `providerMetadata.mnemo` of a result holds: the context the model was given. */
export type MnemoProviderMetadata = {
  /** The context call's request id, for `client.feedback.send`. */
  contextRequestId?: string;
  /** The memories cited in the context, by number. */
  citations: Array<{ i: number; memoryId: string }>;
};

/** The default system message for a context. */
export function defaultFormatContext(context: ContextResult): string {
  return [
    'What you remember about the user from earlier conversations (kept by Mnemo). Use it where ' +
      'it helps; where the user now says otherwise, the user is right.',
    '',
    context.context_text,
  ].join('\n');
}

/**
 * A language model middleware that gives the model an owner's memories and keeps what each turn
 * taught. Before the model runs it fetches the context for the user's last message
 * (`/v1/context`) and adds it as a system message after the app's own; after the turn's final
 * step (not one that ends in tool calls) it stores the user's message and/or the answer
 * (`/v1/memories`, extraction as the server does it) without holding the answer back. Works for
 * `generateText` and `streamText`; the result's `providerMetadata.mnemo` names the memories the
 * model was shown ({@link MnemoProviderMetadata}).
 *
 * @example
 * ```ts
 * import { generateText, wrapLanguageModel } from 'ai';
 * import { MemoryClient } from '@mnemo/client';
 * import { mnemoMemory } from '@mnemo/ai-sdk';
 *
 * const client = new MemoryClient({ apiKey: process.env.MNEMO_API_KEY });
 * const model = wrapLanguageModel({
 *   model: baseModel,
 *   middleware: mnemoMemory({ client, owner: 'u_42' }),
 * });
 * const { text } = await generateText({ model, prompt: 'Book me a seat to Tokyo' });
 * ```
 */
export function mnemoMemory(options: MnemoMemoryOptions): MnemoMemoryMiddleware {
  const {
    client,
    recall = true,
    topK,
    retrievalProfile,
    formatContext = defaultFormatContext,
    remember = 'user',
    shouldRemember,
    extract,
    memoryType,
    metadata,
    onError,
    onRemembered,
  } = options;
  const owner = ownerParams(options.owner);
  const scope = scopeParams(options);
  // A throwing callback must not fail the answer or leave an unhandled rejection behind.
  const report = (error: unknown, stage: MnemoMemoryStage) => {
    try {
      onError?.(error, stage);
    } catch {
      // dropped, as the failure it reports
    }
  };
  const settled = (outcome: RememberOutcome): RememberOutcome => {
    try {
      onRemembered?.(outcome);
    } catch {
      // dropped: the store itself ended as the outcome says
    }
    return outcome;
  };

  /** The context shown to each call, by the params object the model is called with. */
  const shown = new WeakMap<CallOptions, MnemoProviderMetadata>();
  const pending = new Set<Promise<unknown>>();

  async function withContext(params: CallOptions): Promise<CallOptions> {
    const question = lastUserText(params.prompt);
    if (!recall || question === undefined) return params;
    let context: ContextResult;
    try {
      context = await client.context.get(
        {
          // The route takes a bounded query; the start of a long message says what it is about.
          query: question.slice(0, LIMITS.query.max),
          ...(topK === undefined ? {} : { top_k: topK }),
          ...(retrievalProfile ? { retrieval_profile: retrievalProfile } : {}),
          ...owner,
          ...scope,
        },
        { signal: params.abortSignal },
      );
    } catch (error) {
      if (params.abortSignal?.aborted) throw error;
      report(error, 'recall');
      return params;
    }
    const system = context.citations.length > 0 ? formatContext(context) : undefined;
    if (system === undefined) return params;
    const transformed = { ...params, prompt: withSystemMessage(params.prompt, system) };
    shown.set(transformed, {
      ...(context.request_id ? { contextRequestId: context.request_id } : {}),
      citations: context.citations.map(({ i, memory_id }) => ({ i, memoryId: memory_id })),
    });
    return transformed;
  }

  /** The memory text for a finished turn, or undefined when the mode leaves nothing to store. */
  function memoryText(question: string | undefined, answer: string): string | undefined {
    if (remember === 'user') return question;
    if (remember === 'assistant') return answer || undefined;
    if (remember === 'turn' && question !== undefined) {
      return answer ? `user: ${question}\nassistant: ${answer}` : `user: ${question}`;
    }
    return undefined;
  }

  /** Starts the store of a finished turn, in the background. */
  function rememberTurn(params: CallOptions, answer: string): void {
    if (remember === false) return;
    const question = lastUserText(params.prompt);
    const text = memoryText(question, answer);
    if (text === undefined) return;
    if (shouldRemember) {
      try {
        if (!shouldRemember({ userText: question, answerText: answer })) return;
      } catch (error) {
        report(error, 'remember');
        return;
      }
    }
    const roles = remember === 'turn' ? 'user, assistant' : remember;
    const store = client.memories
      .add({
        // Over the route's bound the text is cut: most of a very long message beats none of it.
        text: text.slice(0, LIMITS.memoryText.max),
        ...(memoryType ? { memory_type: memoryType } : {}),
        ...(extract === undefined ? {} : { extract }),
        metadata: writeMetadata(metadata, roles),
        ...owner,
        ...scope,
      })
      .then(
        (stored) =>
          settled({
            status: 'stored',
            memoryId: stored.memory_id,
            deduped: stored.deduped ?? false,
          }),
        (error: unknown) => {
          report(error, 'remember');
          return settled({ status: 'failed', error });
        },
      );
    pending.add(store);
    void store.finally(() => pending.delete(store));
  }

  /** The step ends the turn: the model answered instead of calling tools (or failing). */
  const endsTurn = (finishReason: GenerateResult['finishReason']) =>
    finishReason.unified !== 'tool-calls' && finishReason.unified !== 'error';

  const withMnemoMetadata = <T extends { providerMetadata?: GenerateResult['providerMetadata'] }>(
    part: T,
    metadataOfCall: MnemoProviderMetadata | undefined,
  ): T =>
    metadataOfCall
      ? {
          ...part,
          providerMetadata: {
            ...part.providerMetadata,
            mnemo: metadataOfCall,
          },
        }
      : part;

  return {
    specificationVersion: 'v3',

    transformParams: async ({ params }) => withContext(params),

    wrapGenerate: async ({ doGenerate, params }) => {
      const result = await doGenerate();
      if (endsTurn(result.finishReason)) rememberTurn(params, answerText(result.content));
      return withMnemoMetadata(result, shown.get(params));
    },

    wrapStream: async ({ doStream, params }) => {
      const { stream, ...rest } = await doStream();
      const metadataOfCall = shown.get(params);
      let answer = '';
      let finished: GenerateResult['finishReason'] | undefined;
      const watch = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'text-delta') answer += part.delta;
          if (part.type === 'finish') {
            finished = part.finishReason;
            controller.enqueue(withMnemoMetadata(part, metadataOfCall));
            return;
          }
          controller.enqueue(part);
        },
        flush() {
          // Only a stream read to its end is a finished turn; a cancelled one stores nothing.
          if (finished && endsTurn(finished)) rememberTurn(params, answer.trim());
        },
      });
      return { stream: stream.pipeThrough(watch), ...rest };
    },

    flush: async () => {
      await Promise.all([...pending]);
    },
  };
}
