"""A Flash-Cosmos design sweep from Python (docs/python.md): the bitmap-index workload (BMI, one month) on the
in-flash system as the SLC read time of its multi-wordline sensing grows, against the host-CPU baseline (OSP),
printed as a table.

    PYTHONPATH=build/release/python python3 examples/cosmos_design_sweep.py
"""
import bitline

osp = bitline.cosmos.run(workload="bmi", param="months=1", system="osp")["time_s"]
print(f"{'t_read_slc':>10}  {'fc time (ms)':>12}  {'speed-up vs osp':>15}  bottleneck")
for t_read in ("10us", "20us", "40us", "80us"):
    fc = bitline.cosmos.run(workload="bmi", param="months=1", system="fc", set={"nand.timing.t_read_slc": t_read})
    print(f"{t_read:>10}  {fc['time_s'] * 1e3:>12.3f}  {osp / fc['time_s']:>15.1f}  {fc['bottleneck']}")
