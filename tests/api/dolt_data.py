"""The Dolt seed's example data (shared/seeds/dolt-pushing-down-filters.txt): five states, three cities each."""

STATE_NAMES = ["Alabama", "Alaska", "Arizona", "California", "Colorado"]
#: city i (0-based) lies in state i // 3 + 1
CITY_NAMES = [
    "Alabaster",
    "Auburn",
    "Birmingham",
    "Anchorage",
    "Akutan",
    "Bethel",
    "Avondale",
    "Apache Junction",
    "Buckeye",
    "Alturas",
    "Anaheim",
    "Bakersfield",
    "Aurora",
    "Aspen",
    "Boulder",
]
