"""torch.sort beside gsync's sorts (examples/radix_sort.rs): random int32 keys from 2^16 to 2^26,
alone and with an int32 value each (sorted stably, the values gathered by the returned
indices, as a PyTorch user would), timed by CUDA events: the median of 10 runs after a warm-up,
each result checked."""
import sys

import torch


def median_us(run, reps=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    run()
    times = []
    for _ in range(reps):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return sorted(times)[len(times) // 2]


def main():
    lo, hi = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (16, 26)
    gen = torch.Generator(device="cuda").manual_seed(1)
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}")
    print("| keys | torch.sort keys µs | torch.sort + gather pairs µs | checked |")
    print("|---:|---:|---:|---|")
    for log in range(lo, hi + 1):
        n = 1 << log
        keys = torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device="cuda", generator=gen)
        values = torch.arange(n, dtype=torch.int32, device="cuda")
        alone = median_us(lambda: torch.sort(keys))
        pairs = median_us(lambda: (lambda s: values[s.indices])(torch.sort(keys, stable=True)))
        s = torch.sort(keys, stable=True)
        ok = bool((s.values[1:] >= s.values[:-1]).all()) and bool((keys[s.indices] == s.values).all())
        print(f"| 2^{log} | {alone:.1f} | {pairs:.1f} | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    main()
