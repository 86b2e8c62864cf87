-- Writes to the Redis log when the route option luaLog is on.
local function routeLog(enabled, ...)
  if enabled == '1' then redis.log(redis.LOG_NOTICE, table.concat({ ... }, ' ')) end
end
