-- TechEmpower pipeline.lua: 16 pipelined requests per write.
local batch
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format() end
  batch = table.concat(r)
end
request = function() return batch end
