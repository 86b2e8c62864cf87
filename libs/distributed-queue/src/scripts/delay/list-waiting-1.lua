--[[
  One bounded step of a page of the waiting set (see includes/waiting-set.lua) in (due, submission) order.
  The set is kept in chunks by submission, so a page in due order is a merge of chunks: this step reads at
  most STEP_CHUNKS chunks of the index (in order of their earliest due time, from where the last step
  stopped) and returns, of each, its first `limit` tasks after the cursor and within the range; it stops
  early once STEP_TASKS tasks are read, and skips the chunks that start after the due time by which one chunk
  alone filled the page. The caller (delay/waiting-page.ts) merges the steps and keeps the
  first `limit`. A page is thus a walk over the chunks whose earliest due time comes before the page's last
  task, a bounded step per call: no call costs more than STEP_CHUNKS chunk reads and STEP_TASKS tasks.
  KEYS[1] waiting (the index)
  ARGV[1] range: 'ready' (due <= now), 'delayed' (due > now) or 'all'
  ARGV[2] now (ms), or '' on the first step (Redis's now, returned)
  ARGV[3] cursor due  ARGV[4] cursor seq: only tasks after (due, seq) ('' and '': from the start)
  ARGV[5] bound: the due time of the limit-th task found so far ('': none); later tasks are not needed
  ARGV[6] the chunk read last ('' at the start)  ARGV[7] its index score then  ARGV[8] its index rank + 1
  ARGV[9] limit
  Returns: { now, done (1: no chunk left to read), last chunk read, its score, its rank + 1, then per task:
  id, seq, due }
]]
--- @include "includes/now-ms"
--- @include "includes/fmt"
--- @include "includes/waiting-set"

local STEP_CHUNKS, STEP_TASKS = 64, 1000
local ws, range = KEYS[1], ARGV[1]
local now = tonumber(ARGV[2]) or nowMs()
local afterDue, afterSeq = tonumber(ARGV[3]), tonumber(ARGV[4])
local bound = tonumber(ARGV[5])
local lastChunk, lastScore, nextRank = ARGV[6], ARGV[7], tonumber(ARGV[8])
local limit = tonumber(ARGV[9])

-- The range's ends; the cursor raises the low end (open: tasks at that due time are after the cursor only
-- by seq, decided per chunk below).
local low, lowOpen, high = -math.huge, false, math.huge
if range == 'ready' then high = now elseif range == 'delayed' then low, lowOpen = now, true end
if bound and bound < high then high = bound end
local cursorAtLow = false
if afterDue and afterDue >= low then
  if afterDue > low then lowOpen = false end
  low, cursorAtLow = afterDue, true
end
local highText = high == math.huge and '+inf' or fmt(high)

-- Where to go on in the index: after the chunk read last, when it is still where it was; else (it moved
-- or went, or chunks before it did) from its old score (chunks read again are dropped by the caller).
-- NOTE: ZRANGE and ZCOUNT, not ZRANK: the commands of the documented ACL rule.
local start = 0
if lastChunk ~= '' then
  local at = redis.call('ZRANGE', ws, nextRank - 1, nextRank - 1, 'WITHSCORES')
  if at[1] == lastChunk and tonumber(at[2]) == tonumber(lastScore) then
    start = nextRank
  else
    start = redis.call('ZCOUNT', ws, '-inf', '(' .. lastScore)
  end
end

local out = { now, 1, lastChunk, lastScore, start }
local tasks, read = 0, 0
local chunks = redis.call('ZRANGE', ws, start, start + STEP_CHUNKS - 1, 'WITHSCORES')
for i = 1, #chunks, 2 do
  if tonumber(chunks[i + 1]) > high then break end
  if read > 0 and tasks >= STEP_TASKS then
    out[2] = 0
    break
  end
  read = read + 1
  local chunk = chunks[i]
  local first = (splitSeqTag(chunk) or 0) * WS_CHUNK
  -- the chunk's seqs are [first, first + WS_CHUNK - 1]: all after the cursor's, all before it, or mixed
  local open, mixed = lowOpen, false
  if cursorAtLow then
    if first + WS_CHUNK - 1 <= afterSeq then open = true elseif first <= afterSeq then mixed = true end
  end
  local fromText = low == -math.huge and '-inf' or ((open and '(' or '') .. fmt(low))
  local got = redis.call('ZRANGEBYSCORE', wsChunkKey(ws, chunk), fromText, highText, 'WITHSCORES', 'LIMIT', 0, mixed and limit + WS_CHUNK or limit)
  local own = 0
  for j = 1, #got, 2 do
    local seq = splitSeqTag(got[j]) or 0
    if not (mixed and tonumber(got[j + 1]) == afterDue and seq <= afterSeq) then
      out[#out + 1] = idOfMember(got[j])
      out[#out + 1] = seq
      out[#out + 1] = got[j + 1]
      tasks, own = tasks + 1, own + 1
      -- NOTE: this chunk alone fills the page up to here: no task due later can be on it (a bound for the
      -- chunks still to read; the caller's bound does the same across steps).
      if own == limit then
        local due = tonumber(got[j + 1])
        if due < high then high, highText = due, fmt(due) end
        break
      end
    end
  end
  out[3], out[4], out[5] = chunk, chunks[i + 1], start + read
end
if read == #chunks / 2 and #chunks / 2 == STEP_CHUNKS then out[2] = 0 end
return out
