-- The task json of a route dead letter {"item":"<stored item>",...}; nil when the letter or its task is
-- unreadable (no id, type and key).
--- @include "includes/item-body"
local function deadBody(letter)
  local ok, decoded = pcall(cjson.decode, letter)
  if not ok or type(decoded) ~= 'table' or type(decoded.item) ~= 'string' then return nil end
  local body = itemBody(decoded.item)
  if not body then return nil end
  local okBody, task = pcall(cjson.decode, body)
  if not okBody or type(task) ~= 'table' then return nil end
  if type(task.id) ~= 'string' or type(task.type) ~= 'string' or type(task.key) ~= 'string' then return nil end
  return body
end
