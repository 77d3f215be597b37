B=/tmp/cand/split/tachyon-bench
export TACHYON_BASELINE=/tmp/cand/d94/tachyon
r() { n=$1; shift; $B run "$@" --servers tachyon,tachyon-baseline --rounds 5 --duration 5 --congestion cubic --out /tmp/runs/split-$n > /tmp/runs/split-$n.log 2>&1; }
r h1 --suite sparecores,real --cells "1k t2 c4,1k t2 c64,64k t2 c8,docs paths browser h1 c32"
r h2c --suite h2c --cells "1k c32 m10,64k c32 m10"
r realh2c --suite real-h2c --cells "docs paths browser h2 c32 m10"
r tls --suite tls --cells "1k t1 c32,64k t1 c32"
echo done > /tmp/runs/split-ab.done
