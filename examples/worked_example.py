x = torch.tensor(2.0)
w = 3.0
b = 1.0
y = w * x + b
loss = y * y
