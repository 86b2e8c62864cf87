import { skipInPipeline } from './bounded-calls';

/** ioredis's pipeline pseudo-stream, in short: once `pending` writes came, it writes them to its destination. */
function pipelineStream(pending: number, redis?: { written: string[] }) {
  let data = '';
  const destination: { redis?: { written: string[] } } = { redis };
  return {
    isPipeline: true as const,
    destination,
    write(writable: string) {
      data += writable;
      if (!--pending) (destination.redis as { written: string[] }).written.push(data);
    },
  };
}

describe('skipInPipeline', () => {
  it('writes a refused command of a pipeline empty, so the pipeline writes the others', () => {
    const redis = { written: [] as string[] };
    const stream = pipelineStream(2, redis);
    stream.write('*1\r\n$4\r\nPING\r\n');
    skipInPipeline(stream);
    expect(redis.written).toEqual(['*1\r\n$4\r\nPING\r\n']);
  });

  it('ignores a cluster pipeline with no connection whose commands were all refused: nothing to write', () => {
    const stream = pipelineStream(2);
    skipInPipeline(stream);
    expect(() => skipInPipeline(stream)).not.toThrow();
  });

  it('leaves commands sent alone', () => {
    expect(() => skipInPipeline(undefined)).not.toThrow();
    expect(() => skipInPipeline({ write: () => undefined })).not.toThrow();
  });
});
