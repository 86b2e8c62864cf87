--- @undeclared-keys
-- What running tasks report (see delay/task-reports.ts), in two HASHes beside <jobs>, derived from its name:
-- - <jobs>:pg, progress: id -> "<reservation token>\n<JSON>", the last value of the attempt holding that
--   reservation. It lives while the attempt runs: its worker clears it as the attempt ends; an entry whose
--   token is no longer the reservation's (its worker died) is not shown and is swept (see report-5.lua).
-- - <jobs>:lg, log lines: id -> "<lines dropped> <run> <its last line's number> <lines>\n<line>\n...", each
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

-- Appends the lines of one report to id's log: `lines` ('\n'-joined, none empty) are lines firstSeq.. of the
-- run `run` (its reservation's stamp, a string of digits growing with time: a run handed back and run again
-- is the same attempt but another run), which numbers its lines from 1. A line already kept (a report sent
-- again after a call that timed out but ran) is skipped, so is every line of an earlier run than the log's last; a gap in
-- the numbers (lines the worker dropped while Redis was away) counts as dropped. Then the oldest lines past
-- maxLines or maxBytes go (the newest line stays whatever its size: the caller bounds a line).
-- The log: "<dropped> <run> <last seq> <lines kept>\n<line>\n...". Work: the new lines scanned, the
-- dropped lines' part scanned, the log copied twice (one sub, one concat): O(maxBytes).
local function appendLog(logsKey, id, lines, firstSeq, run, maxLines, maxBytes)
  local old = redis.call('HGET', logsKey, id)
  local dropped, lastRun, lastSeq, count, from = 0, '', 0, 0, nil
  if old then
    local d, r, q, c, at = string.match(old, '^(%d+) (%d+) (%d+) (%d+)\n()')
    if d then dropped, lastRun, lastSeq, count, from = tonumber(d), r, tonumber(q), tonumber(c), at end
  end
  -- NOTE: stamps are compared as digit strings (longer is later): they exceed a double's exact integers
  if #run < #lastRun or (#run == #lastRun and run < lastRun) then return end
  if run ~= lastRun then lastSeq = 0 end
  local n = 1
  for _ in string.gmatch(lines, '\n') do n = n + 1 end
  local skip = lastSeq - firstSeq + 1
  if skip >= n then return end
  local lfrom = 1
  for _ = 1, skip do lfrom = string.find(lines, '\n', lfrom, true) + 1 end
  n, firstSeq = n - math.max(skip, 0), firstSeq + math.max(skip, 0)
  dropped = dropped + (firstSeq - lastSeq - 1)
  -- the kept part of the old log: old[from..], empty when there is none
  if not from or from > #old then old, from, count = '', 1, 0 end
  count = count + n
  local total = #lines - lfrom + 1
  if #old >= from then total = total + (#old - from + 1) + 1 end
  -- the oldest lines go: first from the old log, then (a report larger than the bounds) from the new lines
  while count > 1 and (count > maxLines or total > maxBytes) do
    if #old >= from then
      local nl = string.find(old, '\n', from, true)
      if nl then
        total, from = total - (nl - from + 1), nl + 1
      else
        total, from = total - (#old - from + 1) - 1, #old + 1
      end
    else
      local nl = string.find(lines, '\n', lfrom, true)
      total, lfrom = total - (nl - lfrom + 1), nl + 1
    end
    count, dropped = count - 1, dropped + 1
  end
  local header = dropped .. ' ' .. run .. ' ' .. (firstSeq + n - 1) .. ' ' .. count .. '\n'
  local new = lfrom > 1 and string.sub(lines, lfrom) or lines
  if #old >= from then
    redis.call('HSET', logsKey, id, header .. string.sub(old, from) .. '\n' .. new)
  else
    redis.call('HSET', logsKey, id, header .. new)
  end
end
