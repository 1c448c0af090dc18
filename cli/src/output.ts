/** Where the CLI writes; `process.stdout` satisfies it, and so does a test's string buffer. */
export interface Writer {
  write(chunk: string): unknown;
}

/**
 * Every byte the CLI prints goes through here, so that `--json` holds everywhere: with it,
 * stdout carries exactly one JSON document per command and nothing else.
 */
export class Output {
  constructor(
    readonly stdout: Writer,
    readonly stderr: Writer,
    readonly json: boolean,
  ) {}

  /** A command's result: `data` as JSON with `--json`, else the human rendering of it. */
  result<T>(data: T, human: (data: T) => string): void {
    if (this.json) this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    else this.stdout.write(ensureNewline(human(data)));
  }

  /** Plain text for humans on stdout (help); never mixed into `--json` results. */
  info(text: string): void {
    this.stdout.write(ensureNewline(text));
  }

  /** Diagnostics on stderr. */
  error(text: string): void {
    this.stderr.write(ensureNewline(text));
  }
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Rows as left-aligned columns; the last column is not padded. */
export function table(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
        .join('  '),
    )
    .join('\n');
}

/** `key  value` lines, skipping absent values. */
export function keyValues(entries: ReadonlyArray<readonly [string, unknown]>): string {
  return table(
    entries
      .filter(([, value]) => value !== undefined && value !== null && value !== '')
      .map(([key, value]) => [
        key,
        typeof value === 'object' ? JSON.stringify(value) : String(value),
      ]),
  );
}

/** One line of at most `max` characters. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
