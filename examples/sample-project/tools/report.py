"""Prints a weekly pantry report from a JSON export of the shelves."""
import json
import sys
from datetime import date

WARN_DAYS = 3


def expiring(items, today):
    """Items that go off within WARN_DAYS days, soonest first."""
    soon = [i for i in items if (date.fromisoformat(i["expires"]) - today).days <= WARN_DAYS]
    return sorted(soon, key=lambda i: i["expires"])


def main(path):
    with open(path, encoding="utf-8") as f:
        items = json.load(f)["items"]
    for item in expiring(items, date.today()):
        print(f"{item['name']}: use by {item['expires']}")


if __name__ == "__main__":
    main(sys.argv[1])
