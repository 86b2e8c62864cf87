-- Admission of a type's reservations (issue 28): a fleet-wide concurrency and a fleet-wide rate limit, read
-- from the type's limits hash. A type without limits has no hash: one HMGET of a missing key.
--   HASH <limits>  'gc'  concurrency from the workers' options     'gc!' an operator's ('-': none)
--                  'rl'  rate limit "<max>:<perMs>:<burst>" from the options     'rl!' an operator's ('-': none)
--                  'tat' the rate limit's theoretical arrival time (ms, Redis clock): GCRA
--                  'gcw' set when a take found no free slot: the next ack wakes the type's workers
--                  'until' ms (Redis clock): a handler met a rate limit of its own; nothing starts before
-- The rate limit is GCRA: each start moves 'tat' on by T = perMs / max; a start is allowed while
-- tat - burst * T <= now. So no window of perMs ever holds more than max + burst starts, and the long-run
-- rate is max per perMs exactly, whatever the number of workers.

local function admissionLimit(configured, override)
  if override == '-' then return nil end
  return override or configured
end

-- The limits of the type: a table, or nil when it has none (the common case: nothing more to do).
local function admissionRead(limits)
  local f = redis.call('HMGET', limits, 'gc', 'gc!', 'rl', 'rl!', 'tat', 'gcw', 'until')
  local gc, rl = admissionLimit(f[1], f[2]), admissionLimit(f[3], f[4])
  if not gc and not rl and not f[6] and not f[7] then return nil end
  return { key = limits, gc = tonumber(gc), rl = rl, tat = tonumber(f[5] or '0'), waiting = f[6] ~= false, untilMs = tonumber(f[7] or '0') }
end

-- Acks freed slots: wakes the workers a full fleet turned away (publishes once per wait).
local function admissionFreed(lim, channel)
  if lim and lim.waiting then
    redis.call('HDEL', lim.key, 'gcw')
    redis.call('PUBLISH', channel, 'w:0')
    lim.waiting = false
  end
end

-- How many of `count` may be reserved now, and the ms until more may be (-2: when a slot frees: the worker
-- looks again as its own tasks finish, and an ack wakes the workers a full fleet turned away). `active`
-- holds the leases (score: deadline): the live ones are the slots in use.
local function admissionAllow(lim, active, now, count)
  if not lim or count <= 0 then return count, -1 end
  if lim.untilMs > now then return 0, lim.untilMs - now end
  local allowed, wait = count, -1
  if lim.gc then
    local free = lim.gc - redis.call('ZCOUNT', active, '(' .. now, '+inf')
    if free < allowed then allowed, wait = math.max(free, 0), -2 end
    if allowed == 0 then
      redis.call('HSET', lim.key, 'gcw', '1')
      lim.waiting = true
      return 0, -2
    end
  end
  if lim.rl then
    local max, per, burst = string.match(lim.rl, '^(%d+):(%d+):(%d+)$')
    if max then
      local t = tonumber(per) / tonumber(max)
      local base = math.max(lim.tat, now)
      -- NOTE: 1e-9: (burst * t) / t may round below burst.
      local n = math.floor((now - base) / t + tonumber(burst) + 1e-9) + 1
      if n < 0 then n = 0 end
      lim.t, lim.base = t, base
      if n < allowed then
        allowed = n
        wait = math.max(1, math.ceil(base + n * t - tonumber(burst) * t - now))
      end
    end
  end
  return allowed, wait
end

-- Charges the rate limit for `taken` reservations made.
local function admissionCharge(lim, taken)
  if lim and lim.t and taken > 0 then
    redis.call('HSET', lim.key, 'tat', string.format('%.3f', lim.base + taken * lim.t))
  end
end
