"""``save_image``: writes the batch's shape and range to the file (no image library needed)."""


def save_image(tensor, fp, nrow=8, normalize=False, **kwargs):
    with open(fp, "w") as f:
        f.write(f"{tuple(tensor.shape)} {float(tensor.min()):.3f} {float(tensor.max()):.3f}\n")
