# coloc.py WRKPID SERVERPID SECONDS: every 2 ms, which CPU the busiest thread (by schedstat ns in the interval) of each ran on last
import sys,time,os
wp,sp,secs=sys.argv[1],sys.argv[2],float(sys.argv[3])
def pids(p):
    out=[p]
    try: out+= open(f"/proc/{p}/task/{p}/children").read().split()
    except: pass
    return out
def threads(p):
    out={}
    for pid in pids(p):
        try: ts=os.listdir(f"/proc/{pid}/task")
        except: continue
        for t in ts:
            try:
                s=open(f"/proc/{pid}/task/{t}/stat").read(); ns=int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
            except: continue
            f=s[s.rindex(')')+2:].split()
            out[t]=(int(f[36]),ns)
    return out
pw=threads(wp); ps=threads(sp)
n=same=apart=moves=0; lastw=None
end=time.time()+secs
while time.time()<end:
    time.sleep(0.002)
    w=threads(wp); s=threads(sp)
    dw=max(w, key=lambda t: w[t][1]-pw.get(t,(0,0))[1]); ds=max(s, key=lambda t: s[t][1]-ps.get(t,(0,0))[1])
    if w[dw][1]-pw.get(dw,(0,0))[1]>0 and s[ds][1]-ps.get(ds,(0,0))[1]>0:
        n+=1
        if w[dw][0]==s[ds][0]: same+=1
        if lastw is not None and w[dw][0]!=lastw: moves+=1
        lastw=w[dw][0]
    pw,ps=w,s
print(f"intervals {n} co-located {same} ({100*same//max(n,1)}%) wrk moves {moves}")
