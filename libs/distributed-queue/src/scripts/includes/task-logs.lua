--- @undeclared-keys
-- What running tasks report (see delay/task-reports.ts), in two HASHes beside <jobs>, derived from its name:
-- - <jobs>:pg, progress: id -> "<reservation token>\n<JSON>", the last value of the attempt holding that
--   reservation. It lives while the attempt runs: its worker clears it as the attempt ends; an entry whose
--   token is no longer the reservation's (its worker died) is not shown and is swept (see report-5.lua).
-- - <jobs>:lg, log lines: id -> "<lines dropped> <attempt> <its last line's number> <lines>\n<line>\n...", each
--   line a JSON array [attempt, epoch ms, text], oldest first, across attempts, capped by lines and bytes
--   (the oldest go).
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

-- Appends the lines of one report to id's log: `lines` ('\n'-joined, none empty) are lines firstSeq.. of
-- `attempt` (each attempt numbers its lines from 1). A line already kept (a report sent again after a call
-- that timed out but ran) is skipped, so is every line of an earlier attempt than the log's last; a gap in
-- the numbers (lines the worker dropped while Redis was away) counts as dropped. Then the oldest lines past
-- maxLines or maxBytes go (the newest line stays whatever its size: the caller bounds a line).
-- The log: "<dropped> <attempt> <last seq> <lines kept>\n<line>\n...". Work: the new lines scanned once,
-- the log copied once (bounded by maxBytes), the dropped lines' part scanned once.
local function appendLog(logsKey, id, lines, firstSeq, attempt, maxLines, maxBytes)
  local old = redis.call('HGET', logsKey, id)
  local dropped, lastAttempt, lastSeq, count, body = 0, 0, 0, 0, nil
  if old then
    local d, a, q, c, rest = string.match(old, '^(%d+) (%d+) (%d+) (%d+)\n(.*)$')
    dropped, lastAttempt, lastSeq, count, body = tonumber(d) or 0, tonumber(a) or 0, tonumber(q) or 0, tonumber(c) or 0, rest
  end
  if attempt < lastAttempt then return end
  if attempt > lastAttempt then lastSeq = 0 end
  local n = 1
  for _ in string.gmatch(lines, '\n') do n = n + 1 end
  local skip = lastSeq - firstSeq + 1
  if skip >= n then return end
  local from = 1
  for _ = 1, skip do from = string.find(lines, '\n', from, true) + 1 end
  if skip > 0 then
    lines, n, firstSeq = string.sub(lines, from), n - skip, firstSeq + skip
  end
  dropped = dropped + (firstSeq - lastSeq - 1)
  local all = (body and body ~= '') and (body .. '\n' .. lines) or lines
  count = ((body and body ~= '') and count or 0) + n
  from = 1
  while count > 1 and (count > maxLines or #all - from + 1 > maxBytes) do
    from = string.find(all, '\n', from, true) + 1
    count, dropped = count - 1, dropped + 1
  end
  if from > 1 then all = string.sub(all, from) end
  redis.call('HSET', logsKey, id, dropped .. ' ' .. attempt .. ' ' .. (firstSeq + n - 1) .. ' ' .. count .. '\n' .. all)
end
