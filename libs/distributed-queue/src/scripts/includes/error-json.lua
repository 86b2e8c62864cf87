-- The JSON of a failure as stored in `errors` and shown to users.
local function errorJson(name, message, attempts, now)
  return cjson.encode({ name = name, message = message, attempts = attempts, failedAt = now })
end
