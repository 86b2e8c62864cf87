/**
 * Typed task contracts at compile time: small programs are type-checked with the TypeScript compiler (one
 * Program for all of them, each case in its own in-memory file). A line ending in `//! TS<code>` must have a
 * diagnostic with that code (and, given `"text"`, a message containing it); no other line may have one.
 * Needs no Redis: it is in the e2e project because it compiles the whole library (a few seconds).
 */
import * as path from 'path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
/** Where the fixtures seem to be (they are never written): imports below are relative to it. */
const FIXTURE_DIR = path.join(ROOT, 'test', 'typed-contracts-fixtures');

/** The one place the fixtures import the library from: by its package name, as users do. */
const HEADER = `
import { Injectable } from '@nestjs/common';
import {
  TaskInspectorService, TaskSubmitService, TaskWorker, defineTask, typeOf,
  type PayloadOf, type Task, type TaskContract, type TaskHandler,
} from 'nestjs-distributed-queue';

interface CloseOrderPayload { orderId: string }
const CloseOrder = defineTask<CloseOrderPayload>('order.close');
const ApplyLedger = defineTask<{ account: string; amount: number }>('ledger.apply', { ordered: true });
declare const tasks: TaskSubmitService;
declare const inspect: TaskInspectorService;
`;

/** The cases: file name and body (after HEADER). */
const CASES: Record<string, string> = {
  'correct-usage.ts': `
    async function run(): Promise<void> {
      const id: string = await tasks.submit(CloseOrder, { orderId: 'o1' }, { delay: 1000 });
      await tasks.submitMany(CloseOrder, [{ payload: { orderId: 'o2' }, id: 'o2' }]);
      await tasks.submitOrdered(ApplyLedger, 'acc-1', { account: 'acc-1', amount: 5 }, { delay: 10 });
      await tasks.submitOrderedMany(ApplyLedger, [{ key: 'acc-1', payload: { account: 'acc-1', amount: 1 } }]);
      await tasks.cancel(CloseOrder, id);
      await tasks.reschedule(CloseOrder, id, { delay: 5 });
      const orderId: string | undefined = (await inspect.getTask(CloseOrder, id)).payload?.orderId;
      const dead: (CloseOrderPayload | undefined)[] = (await inspect.listDead(CloseOrder)).tasks.map((t) => t.payload);
      await inspect.getState(CloseOrder, id);
      await inspect.redriveDead(CloseOrder, [id]);
      await inspect.deleteDead(CloseOrder, [id]);
      const type: string = typeOf(CloseOrder) + CloseOrder.type;
      const ordered: true = ApplyLedger.ordered;
      const notOrdered: false = CloseOrder.ordered;
      const contract: TaskContract<CloseOrderPayload> = CloseOrder;
      const payload: PayloadOf<typeof ApplyLedger> = { account: 'a', amount: 1 };

      // Plain strings work as before: any payload, or the one given as a type argument.
      await tasks.submit('order.close', { anything: [1, 2] });
      await tasks.submit<{ n: number }>('counter', { n: 1 });
      await tasks.submitMany('counter', [{ payload: 1 }, { payload: 'two', delay: 5 }]);
      await tasks.submitOrdered('ledger', 'key', { whatever: true });
      await tasks.submitOrderedMany<number>('ledger', [{ key: 'k', payload: 1 }]);
      await tasks.cancel('order.close', 'x');
      const info = await inspect.getTask<{ n: number }>('counter', 'x');
      const n: number | undefined = info.payload?.n;
      await inspect.listDead('counter', 0, 10);
    }

    @TaskWorker(CloseOrder, { concurrency: 10 })
    @Injectable()
    export class CloseOrderWorker implements TaskHandler<PayloadOf<typeof CloseOrder>> {
      constructor(private readonly dependency: TaskSubmitService) {}
      async handle(task: Task<PayloadOf<typeof CloseOrder>>, signal: AbortSignal): Promise<void> {
        const id: string = task.payload.orderId;
      }
    }

    @TaskWorker(ApplyLedger)
    export class ApplyLedgerWorker {
      handle(task: Task<{ account: string; amount: number }>): number {
        return task.payload.amount;
      }
    }

    @TaskWorker(ApplyLedger, { ordered: true, maxAttempts: 1 })
    export class AnyPayloadWorker {
      handle(task: Task<unknown>): void {}
    }

    // A string-typed worker is checked as before: any handler, even none (that is reported at start-up).
    @TaskWorker('order.close', { concurrency: 2 })
    export class StringWorker implements TaskHandler<{ whatever: number }> {
      handle(task: Task<{ whatever: number }>): void {}
    }
    const decorator: ClassDecorator = TaskWorker('plain');
  `,

  'submit-wrong-payload.ts': `
    async function run(): Promise<void> {
      await tasks.submit(CloseOrder, { orderId: 1 }); //! TS2322 "not assignable to type 'string'"
      await tasks.submit(CloseOrder, { order: 'o1' }); //! TS2561
      await tasks.submit(CloseOrder, 'o1'); //! TS2345
      await tasks.submitMany(CloseOrder, [{ payload: { orderId: 2 } }]); //! TS2322
    }
  `,

  'submit-ordered-wrong-payload.ts': `
    async function run(): Promise<void> {
      await tasks.submitOrdered(ApplyLedger, 'acc-1', { account: 'acc-1', amount: '5' }); //! TS2322 "not assignable to type 'number'"
      await tasks.submitOrdered(ApplyLedger, 'acc-1', { account: 'acc-1' }); //! TS2345 "amount"
      await tasks.submitOrderedMany(ApplyLedger, [{ key: 'k', payload: { orderId: 'o1' } }]); //! TS2353
    }
  `,

  'worker-wrong-payload.ts': `
    @TaskWorker(CloseOrder) //! TS1238 "Property 'amount' is missing"
    export class WrongWorker {
      handle(task: Task<{ amount: number }>): void {}
    }

    @TaskWorker(CloseOrder) //! TS1238 "Property 'extra' is missing"
    export class ExpectsMoreWorker {
      handle(task: Task<{ orderId: string; extra: number }>): void {}
    }

    @TaskWorker(CloseOrder) //! TS1238 "Property 'handle' is missing"
    export class NoHandleWorker {}
  `,

  'wrong-queue-kind.ts': `
    async function run(): Promise<void> {
      await tasks.submitOrdered(CloseOrder, 'k', { orderId: 'o1' }); //! TS2345 "Type 'false' is not assignable to type 'true'"
      await tasks.submit(ApplyLedger, { account: 'a', amount: 1 }); //! TS2345 "Type 'true' is not assignable to type 'false'"
      await tasks.submitMany(ApplyLedger, []); //! TS2345
      await tasks.cancel(ApplyLedger, 'x'); //! TS2345
      await inspect.getTask(ApplyLedger, 'x'); //! TS2345
    }

    @TaskWorker(ApplyLedger, { ordered: false }) //! TS2769
    export class NotOrderedWorker {
      handle(task: Task<{ account: string; amount: number }>): void {}
    }
  `,

  'other-misuse.ts': `
    async function run(): Promise<void> {
      const count: number = (await inspect.getTask(CloseOrder, 'x')).payload!.orderId; //! TS2322
      await tasks.submit({ type: 'order.close', ordered: false }, { orderId: 'o1' }); //! TS2345
      await tasks.submit<{ n: number }>(CloseOrder, { n: 1 }); //! TS2345
    }
    const Flexible = defineTask<number>('flexible', { ordered: Math.random() > 0.5 }); //! TS2769
  `,

  'schedule-contracts.ts': `
    import type { TaskScheduleService } from 'nestjs-distributed-queue';
    declare const schedules: TaskScheduleService;
    void schedules.upsert('close-stale', { everyMs: 60_000, type: CloseOrder, payload: { orderId: 'o1' } });
    void schedules.upsert('by-name', { everyMs: 60_000, type: 'order.close', payload: { anything: true } });
    void schedules.upsert('close-stale', { everyMs: 60_000, type: CloseOrder, payload: { orderId: 1 } }); //! TS2322
    void schedules.upsert('ledger', { everyMs: 60_000, type: ApplyLedger }); //! TS2322
  `,

  'testing-matchers.ts': `
    import type { TestQueue } from 'nestjs-distributed-queue/testing';
    declare const queue: TestQueue;
    declare const any: { asymmetricMatch(other: unknown): boolean };
    queue.expectSubmitted(CloseOrder, { orderId: 'o1' });
    queue.expectSubmitted(CloseOrder, { orderId: any }, 2);
    queue.expectSubmitted(CloseOrder, (payload) => payload.orderId.startsWith('o'));
    queue.expectNotSubmitted('anything', { whatever: 1 });
    const ids: string[] = queue.getSubmitted(CloseOrder).map((t) => t.payload.orderId);
    queue.expectSubmitted(CloseOrder, { orderid: 'o1' }); //! TS2353
    queue.expectSubmitted(CloseOrder, { orderId: 1 }); //! TS2322
    queue.expectSubmitted(CloseOrder, (payload) => payload.n === 1); //! TS2339
    void queue.runTask(CloseOrder, { orderId: 1 }); //! TS2322
  `,
};

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  target: ts.ScriptTarget.ES2021,
  module: ts.ModuleKind.CommonJS,
  lib: ['lib.es2021.d.ts'],
  types: ['node'],
  typeRoots: [path.join(ROOT, 'node_modules', '@types')],
  noEmit: true,
  skipLibCheck: true,
  // NOTE: the package name resolves to the library's sources, as in the repo's tsconfig.json.
  baseUrl: ROOT,
  paths: { 'nestjs-distributed-queue': ['libs/distributed-queue/src'], 'nestjs-distributed-queue/testing': ['libs/distributed-queue/src/testing'] },
};

/** A Program over the cases, served from memory. */
function createProgram(): ts.Program {
  const files = new Map(Object.entries(CASES).map(([name, body]) => [path.join(FIXTURE_DIR, name), HEADER + body]));
  const host = ts.createCompilerHost(COMPILER_OPTIONS);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => files.has(path.resolve(file)) || fileExists.call(host, file);
  host.readFile = (file) => files.get(path.resolve(file)) ?? readFile.call(host, file);
  host.getSourceFile = (file, languageVersion, ...rest) => {
    const text = files.get(path.resolve(file));
    if (text === undefined) return getSourceFile.call(host, file, languageVersion, ...rest);
    return ts.createSourceFile(file, text, languageVersion, true);
  };
  return ts.createProgram([...files.keys()], COMPILER_OPTIONS, host);
}

interface Found {
  line: number;
  code: string;
  text?: string;
}

/** What the markers of a case ask for, by 1-based line of the whole file. */
function expectedOf(source: string): Found[] {
  return source.split('\n').flatMap((line, index) => {
    const marker = /\/\/! (TS\d+)(?: "(.*)")?\s*$/.exec(line);
    return marker ? [{ line: index + 1, code: marker[1], text: marker[2] }] : [];
  });
}

describe('typed task contracts (compile time)', () => {
  let program: ts.Program;
  beforeAll(() => {
    program = createProgram();
  });

  it('the compiler options raise no diagnostics', () => {
    const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
    expect(global.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  it.each(Object.keys(CASES))('%s: diagnostics exactly on the marked lines', (name) => {
    const file = program.getSourceFile(path.join(FIXTURE_DIR, name));
    expect(file).toBeDefined();
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    const found = diagnostics.map((d): Found & { message: string } => ({
      line: d.start === undefined ? 0 : file!.getLineAndCharacterOfPosition(d.start).line + 1,
      code: `TS${d.code}`,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }));
    const expected = expectedOf(file!.text);
    const report = (list: Found[]) => list.map((f) => `${f.line} ${f.code}`).sort();
    expect(report(found)).toEqual(report(expected));
    for (const want of expected) {
      if (want.text === undefined) continue;
      const messages = found.filter((f) => f.line === want.line).map((f) => f.message).join('\n');
      expect(messages).toContain(want.text);
    }
  });
});
