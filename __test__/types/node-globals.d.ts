// The Node globals and modules lib/ uses that TypeScript's own libs (es2022, dom) lack, for the
// type check of lib/*.js (jsconfig.json): the repository has no @types/node. Only what lib/ reads.
declare var process: {
  readonly platform: string;
  readonly arch: string;
  /** `node`, and `bun` or `deno` under those runtimes (lib/runtime.js). */
  readonly versions: Readonly<Record<string, string | undefined>>;
};

declare module 'node:fs' {
  export function closeSync(fd: number): void;
}

declare module 'node:path' {
  export function join(...parts: string[]): string;
}

declare module 'node:net' {
  export class Socket {
    constructor(options: { fd: number; readable: boolean; writable: boolean });
    unref(): this;
    pause(): this;
    resume(): this;
    destroy(): this;
    on(event: 'data', listener: (chunk: Uint8Array) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
}
