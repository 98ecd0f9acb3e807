print("longlink")
