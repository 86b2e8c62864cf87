-- Per-group rate limits (issue 29): the GCRA of admission.lua, per group of a type (see groups.lua).
--   HASH <ws>:gtat   group -> its theoretical arrival time (ms, Redis clock)
--   ZSET <ws>:gt     groups with due tasks held out of the rotation by their rate limit -> when the next
--                    start is allowed; the reserve brings them back then (a batch per call)
-- A group's limit is its own ('r:<g>' in <ws>:gset, "<max>:<perMs>:<burst>"), else the type's default
-- (limits 'grl', from the workers' `groupRateLimit`).
--- @include "includes/groups"

local GROUPS_BACK = 100 -- groups brought back into the rotation per call

-- nil: none, and for '' (the due tasks without a group: see groupLimit in groups.lua).
local function groupRate(ws, g)
  if g == '' then return nil end
  local own = redis.call('HGET', ws .. ':gset', 'r:' .. g)
  local text = own or redis.call('HGET', (string.gsub(ws, ':wait$', ':limits')), 'grl')
  if not text then return nil end
  local max, per, burst = string.match(text, '^(%d+):(%d+):(%d+)$')
  if not max then return nil end
  return { t = tonumber(per) / tonumber(max), burst = tonumber(burst) }
end

-- How many of `share` group g may start now, and the ms until it may start one (0 when it may now). The
-- rate's state goes into `rate` for groupRateCharge.
local function groupRateAllow(ws, g, now, share, rate)
  if rate == nil then return share, 0 end
  local base = math.max(tonumber(redis.call('HGET', ws .. ':gtat', g) or '0'), now)
  rate.base = base
  -- NOTE: 1e-9: (burst * t) / t may round below burst.
  local n = math.floor((now - base) / rate.t + rate.burst + 1e-9) + 1
  if n >= share then return share, 0 end
  if n < 0 then n = 0 end
  return n, math.max(1, math.ceil(base + n * rate.t - rate.burst * rate.t - now))
end

local function groupRateCharge(ws, g, rate, taken)
  if rate ~= nil and taken > 0 then
    redis.call('HSET', ws .. ':gtat', g, string.format('%.3f', rate.base + taken * rate.t))
  end
end

-- Brings back into the rotation the groups whose rate allows a start again; returns the ms until the next
-- held-out group may start, or nil.
local function groupsRateWake(ws, now)
  local key = ws .. ':gt'
  local back = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, GROUPS_BACK)
  if #back > 0 then
    redis.call('ZREM', key, unpack(back))
    for _, g in ipairs(back) do
      if redis.call('EXISTS', groupKey(ws, g)) == 1 then groupEnter(ws, g) end
    end
  end
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if head[2] then return math.max(0, tonumber(head[2]) - now) end
  return nil
end
