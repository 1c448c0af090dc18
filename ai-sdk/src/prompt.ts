import type { LanguageModelMiddleware } from 'ai';

/** The language model call as a middleware sees it (the AI SDK's `LanguageModelV3CallOptions`). */
export type CallOptions = Parameters<
  NonNullable<LanguageModelMiddleware['transformParams']>
>[0]['params'];
export type Prompt = CallOptions['prompt'];
export type GenerateResult = Awaited<
  ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>
>;
export type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;

/** The text of the prompt's last user message (its text parts), or undefined when it has none. */
export function lastUserText(prompt: Prompt): string | undefined {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index]!;
    if (message.role !== 'user') continue;
    const text = message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
    return text === '' ? undefined : text;
  }
  return undefined;
}

/**
 * The prompt with a system message after its leading system messages: providers that take one
 * system prompt (Anthropic's) accept system messages only at the start, and the app's own
 * instructions stay first.
 */
export function withSystemMessage(prompt: Prompt, content: string): Prompt {
  const firstOther = prompt.findIndex((message) => message.role !== 'system');
  const at = firstOther === -1 ? prompt.length : firstOther;
  return [...prompt.slice(0, at), { role: 'system', content }, ...prompt.slice(at)];
}

/** The text the model answered with (its text parts, joined). */
export function answerText(content: GenerateResult['content']): string {
  return content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('')
    .trim();
}
