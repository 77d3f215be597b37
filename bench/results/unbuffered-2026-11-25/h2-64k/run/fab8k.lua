-- seed 003 (fabhttp): GET a random one of 1000 8 KiB files; requests prebuilt in init.
local reqs = {}
init = function(args)
  for i = 1, 1000 do reqs[i] = wrk.format(nil, "/fabhttp/randomfiles/" .. i) end
end
request = function() return reqs[math.random(1, 1000)] end
