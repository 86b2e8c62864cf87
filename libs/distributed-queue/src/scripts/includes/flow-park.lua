-- Flows (issue 30): a node that depends on others waits "parked" in its own type, beside its queue, until
-- every dependency completed: its record is in jobs (so its id is taken and getTask finds it), and
--   HASH <ws>:fp   id -> '[n]<deps left>:<delay ms>:<group>' (group may be empty; it is the rest of the text;
--                  'n' while no dependency told so far left a result or an error: released so, the node
--                  loses the '&' its payload was parked with and its worker reads no dependencies, see
--                  flow-plan.ts)
--   HASH <ws>:fd   '<id>\n<dependency ref>' -> 1, one field per dependency not yet completed
-- A completion removes its field; the node that loses its last one enters the queue (flow-release-6.lua),
-- at most once: a repeated completion finds no field and changes nothing, and nothing here creates a node.
-- NOTE: keys built from the waiting set's name (same slot), as groups.lua does.
--- @undeclared-keys

local function parkedKey(ws)
  return ws .. ':fp'
end

local function parkedDepsKey(ws)
  return ws .. ':fd'
end

-- The parked state of id: deps left, delay, group, and whether nothing its dependencies left is to be read
-- so far; nil when it is not parked.
local function parkedOf(ws, id)
  local v = redis.call('HGET', ws .. ':fp', id)
  if not v then return nil end
  local none, left, delay, group = string.match(v, '^(n?)(%d+):(%d+):(.*)$')
  return tonumber(left), tonumber(delay), group, none == 'n'
end

-- Writes (HSET) or removes (HDEL) the fields of id's dependencies: a thousand values per command at most
-- (unpack takes a few thousand), so a node of 10,000 dependencies goes in batches.
local function parkedDepsApply(ws, id, deps, command)
  local args = {}
  for d = 1, #deps do
    args[#args + 1] = id .. '\n' .. deps[d]
    if command == 'HSET' then args[#args + 1] = 1 end
    if #args >= 1000 or d == #deps then
      redis.call(command, parkedDepsKey(ws), unpack(args))
      args = {}
    end
  end
end
