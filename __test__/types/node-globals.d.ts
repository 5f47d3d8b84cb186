// The one Node global lib/ uses that TypeScript's own libs (es2022, dom) lack, for the type check
// of lib/*.js (jsconfig.json): the repository has no @types/node. Only what lib/ reads.
declare var process: {
  readonly platform: string;
  readonly arch: string;
};
