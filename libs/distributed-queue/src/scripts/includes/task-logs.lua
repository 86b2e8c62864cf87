--- @undeclared-keys
-- What running tasks report (see delay/task-reports.ts), in two HASHes beside <jobs>, derived from its name:
-- - <jobs>:pg, progress: id -> "<reservation token>\n<JSON>", the last value of the attempt holding that
--   reservation. It lives while the attempt runs: its worker clears it as the attempt ends; an entry whose
--   token is no longer the reservation's (its worker died) is not shown and is swept (see report-5.lua).
-- - <jobs>:lg, log lines: id -> "<lines dropped>\n<line>\n<line>...", each line a JSON array
--   [attempt, epoch ms, text], oldest first, across attempts, capped by lines and bytes (the oldest go).
--   They live as long as the task: dropped with its record (finished ids trimmed from `done`, dead letters
--   purged or deleted, waiting tasks cancelled or drained).

local function progressKeyOf(jobs)
  return jobs .. ':pg'
end

local function logsKeyOf(jobs)
  return jobs .. ':lg'
end

-- Drops the progress and log lines of `ids` (a list) whose records go.
local function dropReports(jobs, ids)
  if #ids == 0 then return end
  redis.call('HDEL', jobs .. ':pg', unpack(ids))
  redis.call('HDEL', jobs .. ':lg', unpack(ids))
end

-- Appends `lines` ('\n'-joined, none empty) to id's log, then drops the oldest lines past maxLines or
-- maxBytes (the newest line stays whatever its size: the caller bounds a line). O(the log's size) string
-- work, bounded by maxBytes: one scan for the cut, one copy.
local function appendLog(logsKey, id, lines, maxLines, maxBytes)
  local old = redis.call('HGET', logsKey, id)
  local dropped, all = 0, lines
  if old then
    local d, body = string.match(old, '^(%d+)\n(.*)$')
    dropped = tonumber(d) or 0
    if body and body ~= '' then all = body .. '\n' .. lines end
  end
  local count = 1
  for _ in string.gmatch(all, '\n') do count = count + 1 end
  local from = 1
  while count > 1 and (count > maxLines or #all - from + 1 > maxBytes) do
    from = string.find(all, '\n', from, true) + 1
    count, dropped = count - 1, dropped + 1
  end
  if from > 1 then all = string.sub(all, from) end
  redis.call('HSET', logsKey, id, dropped .. '\n' .. all)
end
