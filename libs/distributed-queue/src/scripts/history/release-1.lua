--[[
  Gives up the history writer's lease on one stream, if this writer holds it: called by a writer that shuts
  down after its last copy, so that another instance's writer takes the stream at its next pass instead of
  once the lease expires.
  KEYS[1] the lease key
  ARGV[1] this writer's id
  Returns: 1 released, 0 not held by this writer
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
