/**
 * Drops the helper functions a script never calls from its inlined source. Every call of a script runs its
 * whole body, so each `local function` of its includes becomes a closure on every call, used or not: the
 * submit script defined about a hundred (3.6 µs of Redis per call of its 20, measured with the body cut
 * off after them). Only top-level helpers go: a block from `local function <name>(` at column 0 to the
 * next line that is `end` at column 0 (the includes' layout: their bodies are indented), removed while no
 * other line of the script names it. Conservative: a name in a comment or a string keeps its function.
 */
export function pruneUnusedFunctions(lua: string): string {
  let lines = lua.split('\n');
  for (;;) {
    const blocks = functionBlocks(lines);
    const text = lines.join('\n');
    const unused = blocks.filter((block) => {
      const uses = text.match(new RegExp(`(?<![A-Za-z0-9_])${block.name}(?![A-Za-z0-9_])`, 'g'))?.length ?? 0;
      return uses === block.ownUses;
    });
    if (unused.length === 0) return lines.join('\n');
    const drop = new Set<number>();
    for (const block of unused) for (let i = block.start; i <= block.end; i++) drop.add(i);
    lines = lines.filter((_, i) => !drop.has(i));
  }
}

interface Block {
  name: string;
  start: number;
  end: number;
  /** How many times the name appears within the block itself (its definition, and any recursion). */
  ownUses: number;
}

/** The top-level `local function` blocks of `lines`. A definition whose end cannot be found is left out (kept). */
function functionBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^local function ([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(lines[i]);
    if (!m) continue;
    let end = i + 1;
    // NOTE: the body is indented (or blank, or a comment): a line at column 0 other than `end` before the end
    // (a one-line definition followed by top-level code) is not the layout this relies on: kept
    while (end < lines.length && lines[end] !== 'end' && (lines[end] === '' || /^[\s-]/.test(lines[end]))) end++;
    if (end >= lines.length || lines[end] !== 'end') continue;
    const own = lines.slice(i, end + 1).join('\n');
    const ownUses = own.match(new RegExp(`(?<![A-Za-z0-9_])${m[1]}(?![A-Za-z0-9_])`, 'g'))?.length ?? 0;
    blocks.push({ name: m[1], start: i, end, ownUses });
    i = end;
  }
  return blocks;
}
