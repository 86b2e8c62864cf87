import { pageSlices } from './route-listing';

describe('pageSlices', () => {
  const lengths = [3, 0, 5, 2];
  const ids = lengths.flatMap((n, p) => Array.from({ length: n }, (_, i) => `${p}.${i}`));
  const page = (offset: number, limit: number) =>
    pageSlices(lengths, offset, limit).flatMap(({ partition, start, stop }) => Array.from({ length: stop - start + 1 }, (_, i) => `${partition}.${start + i}`));

  it('pages through the partitions in order: the pages make the whole, once', () => {
    for (const limit of [1, 2, 3, 4, 7, 10, 11]) {
      const pages: string[] = [];
      for (let offset = 0; offset < ids.length; offset += limit) pages.push(...page(offset, limit));
      expect(pages).toEqual(ids);
    }
  });

  it('a page past the end is empty; empty partitions are skipped', () => {
    expect(pageSlices(lengths, 10, 5)).toEqual([]);
    expect(pageSlices(lengths, 3, 2)).toEqual([{ partition: 2, start: 0, stop: 1 }]);
    expect(pageSlices([], 0, 5)).toEqual([]);
  });
});
