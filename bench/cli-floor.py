# The fixed cost of a CLI run against native Ruff's whole run, interleaved, on the machine of
# bench/cli-cores.py (its bundle unpacked in /tmp/b): `node -e 0`, the CLI on a one-file project, and
# both tools on python3-torch. usage: python3 bench/cli-floor.py OUT.json
import os, subprocess, time, statistics, json, sys
B="/tmp/b"; CLI=os.environ.get("GP_CLI", f"{B}/cli/cli.js"); os.makedirs("/tmp/one", exist_ok=True); open("/tmp/one/a.py","w").write("x = 1\n")
def run(cmd):
    t0=time.perf_counter(); p=subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); _,st,ru=os.wait4(p.pid,0); return time.perf_counter()-t0, ru.ru_utime+ru.ru_stime
cmds={"node -e 0":[f"{B}/node","-e","0"],"gp one file":[f"{B}/node",CLI,"check","--no-cache","--exit-zero","/tmp/one"],
"ruff torch":[f"{B}/ruff","check","--no-cache","--select","E4,E7,E9,F","--isolated","--exit-zero","-q",f"{B}/torchcorpus"],
"gp torch":[f"{B}/node",CLI,"check","--no-cache","--exit-zero",f"{B}/torchcorpus"]}
for c in cmds.values(): run(c)
rows={k:[] for k in cmds}
for r in range(11):
    for k,c in (cmds.items() if r%2==0 else reversed(list(cmds.items()))): rows[k].append(run(c))
res={k:{"wall_med":round(statistics.median(x[0] for x in v),4),"cpu_med":round(statistics.median(x[1] for x in v),4)} for k,v in rows.items()}
res["load"]=os.getloadavg(); print(json.dumps(res,indent=1)); json.dump(res,open(sys.argv[1],"w"),indent=1)
