-- The task json of a stored route item "<seq>:<at>:<json>" (or "<seq>:<json>", written before items
-- carried their time); nil when it has no seq.
local function itemBody(item)
  return string.match(item, '^%d+:%d+:(.*)$') or string.match(item, '^%d+:(.*)$')
end
