-- The JSON of a failure as stored in `errors` and shown to users; `instance` (optional, service mode): the
-- application instance the failed delivery went to, which the next attempt avoids; `stack` (optional): the
-- error's stack, bounded by the caller.
local function errorJson(name, message, attempts, now, instance, stack)
  local err = { name = name, message = message, attempts = attempts, failedAt = now }
  if instance ~= nil and instance ~= '' then err.instance = instance end
  if stack ~= nil and stack ~= '' then err.stack = stack end
  return cjson.encode(err)
end
