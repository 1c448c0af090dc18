import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = fileURLToPath(new URL('../../', import.meta.url));

export interface Started {
  child: ChildProcess;
  baseUrl: string;
  stderr: () => string;
  stdout: () => string;
}

/** The server's entry point (`pnpm start` runs the same) in a child process, its pipes read. */
function spawnServer(env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=mnemo-source', 'src/main.ts'],
    {
      cwd: SERVER_DIR,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  return { child, output };
}

/** Starts the real entry point (`pnpm start` runs the same) and waits for its listening line. */
export function startServer(
  env: Record<string, string>,
  { timeoutMs = 60_000 }: { timeoutMs?: number } = {},
): Promise<Started> {
  const { child, output } = spawnServer(env);
  return new Promise((resolve, reject) => {
    let started = false;
    const fail = (reason: string) => {
      if (started) return;
      started = true;
      child.kill('SIGKILL');
      reject(new Error(`${reason}:\n${output.stdout}\n${output.stderr}`));
    };
    const timer = setTimeout(() => fail('server did not start in time'), timeoutMs);
    child.once('exit', (code) => fail(`server exited with ${code}`));
    child.stdout?.on('data', () => {
      const match = /"url":"(http:\/\/[^"]+)","msg":"mnemo listening"/.exec(output.stdout);
      if (match?.[1] && !started) {
        started = true;
        clearTimeout(timer);
        resolve({
          child,
          baseUrl: match[1],
          stderr: () => output.stderr,
          stdout: () => output.stdout,
        });
      }
    });
  });
}

/** SIGTERM, then the exit code (null if it had to be killed after 15 s). */
export function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/** Starts the entry point expecting it to fail: its exit code and what it wrote. */
export function startExpectingFailure(
  env: Record<string, string>,
  { timeoutMs = 60_000 }: { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { child, output } = spawnServer(env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `server still running after ${timeoutMs} ms:\n${output.stdout}\n${output.stderr}`,
        ),
      );
    }, timeoutMs);
    // 'close', not 'exit': the pipes have delivered everything by then.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...output });
    });
  });
}
