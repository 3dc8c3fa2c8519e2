"""How bench.py and slow_link_rows.py sum up and show their times."""
import statistics


def summary(times):
    """Median, p10, p90 and count of `times` (seconds), and the times in order."""
    ordered = sorted(times)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return {"median": statistics.median(ordered), "p10": pick(0.10), "p90": pick(0.90), "n": len(ordered), "times": ordered}


def ms(seconds):
    return f"{seconds * 1000:.1f}"
