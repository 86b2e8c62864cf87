--[[
  One bounded step of a page of the due tasks waiting in the groups' queues (see groups.lua), by group name,
  then within a group by turn (due time, priority) and submission: the groups whose queue holds tasks are
  read by name from the listing index (<ws>:gq), at most STEP_GROUPS groups and about STEP_TASKS tasks a
  step, so a page costs O(groups read x log n) whatever the number of groups and tasks. The caller
  (delay/waiting-page.ts) repeats the step from the position it returns until it has its page.
  KEYS[1] waiting
  ARGV[1] '1': from the first group; '0': after the position in ARGV[2..4]
  ARGV[2] group  ARGV[3] turn ('': after every task of the group)  ARGV[4] seq
  ARGV[5] limit
  Returns: { done (1: no group left after these tasks), the position after the last task or group read
  (group, turn or '', seq or ''), then per task: id, seq, turn, group }
]]
--- @include "includes/fmt"
--- @include "includes/groups"

local STEP_GROUPS, STEP_TASKS = 64, 1000
local ws, limit = KEYS[1], tonumber(ARGV[5])
local out = { 0, ARGV[2], ARGV[3], ARGV[4] }
local tasks = 0

local function add(g, scored)
  for i = 1, #scored, 2 do
    local seq = splitSeqTag(scored[i]) or 0
    out[#out + 1] = idOfMember(scored[i])
    out[#out + 1] = seq
    out[#out + 1] = scored[i + 1]
    out[#out + 1] = g
    tasks = tasks + 1
    out[2], out[3], out[4] = g, scored[i + 1], seq
  end
end

-- The tasks of g's queue after (turn, seq): those at `turn` are in member order, which is submission order
-- (the members begin with their sequence tags), so a binary search over their ranks finds the first after
-- seq in O(log n) reads of one member each.
local function after(key, turn, seq, want)
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. fmt(turn))
  local hi = lo + redis.call('ZCOUNT', key, fmt(turn), fmt(turn))
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZRANGE', key, mid, mid)[1]
    if at == nil then break end
    if (splitSeqTag(at) or 0) <= seq then lo = mid + 1 else hi = mid end
  end
  return redis.call('ZRANGE', key, lo, lo + want - 1, 'WITHSCORES')
end

local from = '-'
if ARGV[1] ~= '1' then
  local g = ARGV[2]
  if ARGV[3] ~= '' then
    add(g, after(groupKey(ws, g), tonumber(ARGV[3]), tonumber(ARGV[4]), limit))
    if tasks >= limit then return out end
    out[2], out[3], out[4] = g, '', ''
  end
  from = '(' .. g
end
local names = redis.call('ZRANGEBYLEX', ws .. ':gq', from, '+', 'LIMIT', 0, STEP_GROUPS)
for _, g in ipairs(names) do
  add(g, redis.call('ZRANGE', groupKey(ws, g), 0, limit - tasks - 1, 'WITHSCORES'))
  if tasks >= limit then return out end
  out[2], out[3], out[4] = g, '', ''
  if tasks >= STEP_TASKS then return out end
end
if #names < STEP_GROUPS then out[1] = 1 end
return out
