-- The waiting set of a type: delayed and ready tasks, members "<seq tag><id>" scored by due time (ms),
-- taken in (due time, submission) order. It is kept in chunks, not one sorted set, for memory: a sorted set
-- of at most 128 short members is a listpack (~20 bytes per task) where one big sorted set costs ~112.
--   ZSET <ws>:<chunk tag>  the members of the tasks whose seq is in [c * 128, c * 128 + 127] -> due time;
--                          c's tag is seqTag(c), so tags order chunks as their numbers (submission order)
--   ZSET <ws>              the index: chunk tag -> the earliest due time in that chunk (the chunk exists
--                          while it holds a task; its index entry exists exactly as long)
--   STRING <ws>:n          the number of waiting tasks
-- A task stays in its chunk for life (its seq never changes), so chunks never split and never grow past 128.
-- headScore(ws) is the earliest due time of all. NOTE: only the functions here touch these keys, with the
-- commands the documented ACL rule allows (INCRBY -n, not DECR).
-- NOTE: the chunks and the count are keys the scripts do not declare: the mark below makes every script
-- that includes this file declare the slot guard too (see slotGuardKey in lua-script.ts), so that none runs
-- while the type's slot migrates between cluster nodes (half applied, or reading keys not yet moved).
--- @undeclared-keys
--- @include "includes/seq-tag"

local WS_CHUNK = 128

local function wsChunkKey(ws, chunk)
  return ws .. ':' .. chunk
end

-- The chunk tag of a seq (an untagged member, written by hand, counts as seq 0).
local function wsChunkOfSeq(seq)
  return (seqTag(math.floor((seq or 0) / WS_CHUNK)))
end

local function wsChunkOf(member)
  return wsChunkOfSeq((splitSeqTag(member)))
end

-- Sets a chunk's index entry to its earliest due time, or removes it when the chunk is empty.
local function wsRefresh(ws, chunk)
  local head = redis.call('ZRANGE', wsChunkKey(ws, chunk), 0, 0, 'WITHSCORES')
  if head[2] then
    redis.call('ZADD', ws, head[2], chunk)
  else
    redis.call('ZREM', ws, chunk)
  end
end

-- Adds the members of one chunk ({ due, member, ... }, their earliest due `minDue`); returns how many were new.
local function wsAddToChunk(ws, chunk, zargs, minDue)
  local added = redis.call('ZADD', wsChunkKey(ws, chunk), unpack(zargs))
  redis.call('ZADD', ws, 'LT', minDue, chunk)
  return added
end

-- Adds one task (or moves it, when already waiting, to `due`).
local function wsAdd(ws, due, member, seq)
  local chunk = wsChunkOfSeq(seq)
  local added = wsAddToChunk(ws, chunk, { due, member }, due)
  if added > 0 then
    redis.call('INCRBY', ws .. ':n', added)
  else
    wsRefresh(ws, chunk) -- moved later: the chunk's earliest may have moved later too
  end
end

-- Adds new tasks in seq order: dues[i], members[i], seqs[i]; one ZADD per chunk they fall in.
local function wsAddMany(ws, dues, members, seqs)
  local added, i, n = 0, 1, #members
  while i <= n do
    local chunkNo = math.floor(seqs[i] / WS_CHUNK)
    local zargs, minDue = {}, dues[i]
    while i <= n and math.floor(seqs[i] / WS_CHUNK) == chunkNo do
      zargs[#zargs + 1] = dues[i]
      zargs[#zargs + 1] = members[i]
      if dues[i] < minDue then minDue = dues[i] end
      i = i + 1
    end
    added = added + wsAddToChunk(ws, seqTag(chunkNo), zargs, minDue)
  end
  if added > 0 then redis.call('INCRBY', ws .. ':n', added) end
end

-- Adds tasks in any order: scores[i], members[i], seqs[i]; one ZADD per chunk they fall in, one index
-- update per chunk and one count update (a batch of tasks moving from elsewhere, e.g. into their turns).
local function wsAddBatch(ws, scores, members, seqs)
  local chunks, order = {}, {}
  for i = 1, #members do
    local c = math.floor(seqs[i] / WS_CHUNK)
    local chunk = chunks[c]
    if chunk == nil then
      chunk = { args = {}, min = scores[i] }
      chunks[c] = chunk
      order[#order + 1] = c
    end
    chunk.args[#chunk.args + 1] = scores[i]
    chunk.args[#chunk.args + 1] = members[i]
    if scores[i] < chunk.min then chunk.min = scores[i] end
  end
  local added = 0
  for _, c in ipairs(order) do added = added + wsAddToChunk(ws, seqTag(c), chunks[c].args, chunks[c].min) end
  if added > 0 then redis.call('INCRBY', ws .. ':n', added) end
end

-- Removes one task; returns 1 when it was waiting.
local function wsRemove(ws, member, seq)
  local chunk = wsChunkOfSeq(seq)
  if redis.call('ZREM', wsChunkKey(ws, chunk), member) == 0 then return 0 end
  wsRefresh(ws, chunk)
  redis.call('INCRBY', ws .. ':n', -1)
  return 1
end

-- A waiting task's due time (Redis's text), or false.
local function wsScore(ws, member, seq)
  return redis.call('ZSCORE', wsChunkKey(ws, wsChunkOfSeq(seq)), member)
end

-- Removes and returns up to `count` tasks due at `now` or earlier, in (due, submission) order: members and
-- their dues (texts). A merge of the chunks: the chunk with the earliest head gives what comes before the
-- next chunk's head, then the index is read again. Tasks submitted in due order (most workloads) come from
-- one chunk in one step; interleaved due times take a step per few tasks.
local function wsTake(ws, now, count)
  local members, dues, n = {}, {}, 0
  local steps = 0
  while n < count and steps < count + 4 do
    steps = steps + 1
    local head = redis.call('ZRANGE', ws, 0, 1, 'WITHSCORES')
    if head[1] == nil or tonumber(head[2]) > now then break end
    local chunk, upper = head[1], now
    if head[3] ~= nil and tonumber(head[4]) <= now then
      -- at the next chunk's head time, this chunk's tasks come first only when its seqs are lower
      upper = head[4]
      if splitSeqTag(chunk) > splitSeqTag(head[3]) then upper = '(' .. head[4] end
    end
    local key = wsChunkKey(ws, chunk)
    local got = redis.call('ZRANGEBYSCORE', key, '-inf', upper, 'WITHSCORES', 'LIMIT', 0, count - n)
    if #got > 0 then
      local removed = {}
      for i = 1, #got, 2 do
        n = n + 1
        removed[(i + 1) / 2], members[n], dues[n] = got[i], got[i], got[i + 1]
      end
      redis.call('ZREM', key, unpack(removed))
    end
    wsRefresh(ws, chunk)
  end
  if n > 0 then redis.call('INCRBY', ws .. ':n', -n) end
  return members, dues
end

-- Removes up to `count` tasks, earliest chunks first (not in strict due order); returns their members.
local function wsPop(ws, count)
  local members = {}
  while #members < count do
    local head = redis.call('ZRANGE', ws, 0, 0)
    if head[1] == nil then break end
    local key = wsChunkKey(ws, head[1])
    local got = redis.call('ZRANGE', key, 0, count - #members - 1)
    if #got > 0 then redis.call('ZREM', key, unpack(got)) end
    for _, member in ipairs(got) do members[#members + 1] = member end
    wsRefresh(ws, head[1])
  end
  if #members > 0 then redis.call('INCRBY', ws .. ':n', -#members) end
  return members
end

-- The number of tasks due at `now` or earlier in the chunks of index ranks `start` to `start + count - 1`
-- (one ZCOUNT per chunk holding one), and the rank to go on from (-1: no chunk after them holds one).
-- NOTE: a bounded step: counts-4.lua and count-ready-1.lua call it for `count` chunks at a time.
local function wsCountReady(ws, now, start, count)
  local ready = 0
  local chunks = redis.call('ZRANGE', ws, start, start + count - 1, 'WITHSCORES')
  for i = 1, #chunks, 2 do
    if tonumber(chunks[i + 1]) > now then return ready, -1 end
    ready = ready + redis.call('ZCOUNT', wsChunkKey(ws, chunks[i]), '-inf', now)
  end
  if #chunks < count * 2 then return ready, -1 end
  return ready, start + count
end

-- NOTE: pages in due order are read by delay/list-waiting-1.lua, a bounded step per call.

-- Moves up to `count` members of a waiting set written by an earlier version (one ZSET of members) into
-- the chunks; returns how many.
local function wsMigrate(legacy, ws, count)
  local old = redis.call('ZRANGE', legacy, 0, count - 1, 'WITHSCORES')
  for i = 1, #old, 2 do
    wsAdd(ws, old[i + 1], old[i], (splitSeqTag(old[i])))
  end
  if #old > 0 then
    local members = {}
    for i = 1, #old, 2 do members[#members + 1] = old[i] end
    redis.call('ZREM', legacy, unpack(members))
  end
  return #old / 2
end
