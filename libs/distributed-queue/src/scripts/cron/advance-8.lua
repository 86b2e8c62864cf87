--[[
  Distributed cron: a tick of a schedule is being handled. Unless the schedule was replaced or removed since
  (its version changed: stale, nothing runs), it decides in one step which run this tick makes and keeps the
  schedule's chain of tick tasks two ticks ahead of now, so that the next tick is pending (and taken by any
  instance) while one instance holds this one: a holder that dies stalls only its own tick, until its lease
  expires, never the schedule.
  What runs: a tick on time runs itself. A tick late past its following tick, whose following tick was
  handled already, runs itself when it is retried (its holder died, the fleet went on); on its first attempt
  it was missed with that following tick (every instance was down, both were taken at once on return), which
  ran for it: superseded, whatever the order of their two advances. Else every instance was down and no
  later tick was handled: it is a catch-up, the last tick due by now runs once for all the missed ones
  (recorded, so that a retry of this tick makes the same choice and the missed ticks still pending do
  nothing: superseded).
  KEYS[1] definitions  KEYS[2] versions  KEYS[3] chain (HASH name -> "<version>:<ms of the furthest tick added>:<ms
  of the next tick after now, '' none>")  KEYS[4] tick type waiting  KEYS[5] its jobs  KEYS[6] its sequence  KEYS[7] last ticks (HASH name
  -> ms of the latest tick handled)  KEYS[8] catch-ups (HASH name -> "<version>:<ms run, and every tick up to
  it covered>:<ms of the tick that made it>")
  ARGV[1] tick type's events channel  ARGV[2] name  ARGV[3] version  ARGV[4] this tick (ms)  ARGV[5] '1' when
  late (its following tick is due)  ARGV[6] its following tick (ms, '' none)  ARGV[7] the last tick due by
  now (ms)  ARGV[8], ARGV[9] the two ticks after now (ms, '' none)  ARGV[10] '1' when this tick is retried
  (its task's attempt is not the first)
  Returns: { 0 stale | 1 run this tick | 2 catch-up | 3 superseded, the tick whose run to submit }
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/seq-tag"
--- @include "includes/add-task"

local name, version, tick = ARGV[2], ARGV[3], tonumber(ARGV[4])
if redis.call('HGET', KEYS[2], name) ~= version or redis.call('HEXISTS', KEYS[1], name) == 0 then return { 0, 0 } end
local now = nowMs()
local outcome, run = 1, tick
local cv, upto, by
local caught = redis.call('HGET', KEYS[8], name)
if caught then cv, upto, by = string.match(caught, '^(%d+):(%d+):(%d+)$') end
if cv ~= version then upto = nil end
local last = tonumber(redis.call('HGET', KEYS[7], name) or '0')
if upto and tonumber(by) == tick then
  outcome, run = 2, tonumber(upto)
elseif upto and tick <= tonumber(upto) then
  outcome, run = 3, tick
elseif ARGV[5] == '1' and ARGV[6] ~= '' and last < tonumber(ARGV[6]) then
  outcome, run = 2, math.max(tick, tonumber(ARGV[7]))
  redis.call('HSET', KEYS[8], name, version .. ':' .. string.format('%.0f', run) .. ':' .. ARGV[4])
elseif ARGV[5] == '1' and ARGV[10] ~= '1' then
  outcome, run = 3, tick
end
if run > last then redis.call('HSET', KEYS[7], name, string.format('%.0f', run)) end

local furthest = 0
local chain = redis.call('HGET', KEYS[3], name)
if chain then
  local v, f = string.match(chain, '^(%d+):(%d+)')
  if v == version then furthest = tonumber(f) end
end
for i = 8, 9 do
  if ARGV[i] ~= '' then
    local at = tonumber(ARGV[i])
    if at > furthest then
      addTask(KEYS[4], KEYS[5], KEYS[6], ARGV[1], name .. '@' .. version .. '@' .. ARGV[i], at,
        cjson.encode({ name = name, version = tonumber(version), tick = at }), now)
      furthest = at
    end
  end
end
if furthest > 0 then
  redis.call('HSET', KEYS[3], name, version .. ':' .. string.format('%.0f', furthest) .. ':' .. ARGV[8])
end
return { outcome, run }
