"""What the memory knows, as fact records with a time (``records.py``): dream writes them,
pages, cards, GUIDE, INDEX, recall and context read them."""
