describe('loading @opentelemetry/api', () => {
  afterEach(() => {
    jest.dontMock('@opentelemetry/api');
    jest.resetModules();
  });

  it('is not loaded when tracing is off', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw new Error('must not be loaded');
      });
      const { createTaskTracer } = require('./task-tracer') as typeof import('./task-tracer');
      expect(createTaskTracer(null)).toBeNull();
    });
  });

  it('fails at start-up with the option name when the package is missing', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { createTaskTracer } = require('./task-tracer') as typeof import('./task-tracer');
      const { InvalidOptionsError: IsolatedError } = require('../errors') as typeof import('../errors');
      expect(() => createTaskTracer({ tracerName: 'x' })).toThrow(IsolatedError);
      expect(() => createTaskTracer({ tracerName: 'x' })).toThrow(/"tracing": needs the @opentelemetry\/api package/);
    });
  });

  it('makes a tracer when the package is there', () => {
    const { createTaskTracer, TaskTracer } = require('./task-tracer') as typeof import('./task-tracer');
    expect(createTaskTracer({ tracerName: 'x' })).toBeInstanceOf(TaskTracer);
  });
});
