"""Dutch case law: Rechtspraak open-data records and their withdrawal state."""
